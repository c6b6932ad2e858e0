import { InvalidArgumentError } from '../errors';
import { Chroot, HostList, parseConnectString } from './hosts';

describe('parseConnectString', () => {
  it('reads hosts, ports and the chroot as the Java client does', () => {
    expect(parseConnectString('a:1,b:2/app/x')).toEqual({ hosts: [{ host: 'a', port: 1 }, { host: 'b', port: 2 }], chroot: '/app/x' });
    expect(parseConnectString('127.0.0.1:2181')).toEqual({ hosts: [{ host: '127.0.0.1', port: 2181 }], chroot: undefined });
    // '/' alone is no chroot; a missing port is 2181; IPv6 in brackets.
    expect(parseConnectString('a/').chroot).toBeUndefined();
    expect(parseConnectString('zk1').hosts).toEqual([{ host: 'zk1', port: 2181 }]);
    expect(parseConnectString('[::1]:2182,[fe80::1]').hosts).toEqual([
      { host: '::1', port: 2182 },
      { host: 'fe80::1', port: 2181 },
    ]);
  });

  it.each(['', ' ', 'a:1,,b:2', 'a:0', 'a:65536', 'a:x', ':2181', 'a:1/app/', 'a:1/a//b'])('refuses %j with InvalidArgumentError', (s) => {
    expect(() => parseConnectString(s)).toThrow(InvalidArgumentError);
  });
});

describe('HostList', () => {
  const hosts = [1, 2, 3].map((port) => ({ host: 'h', port }));

  it('shuffles once, then goes round; says when every host has been tried since the last connection', () => {
    const list = new HostList(hosts, () => 0);
    const order = list.order.map((h) => h.port);
    expect([...order].sort()).toEqual([1, 2, 3]);
    const tries = Array.from({ length: 7 }, () => list.next());
    expect(tries.map((t) => t.host.port)).toEqual([...order, ...order, order[0]]);
    // The first round starts without a wait; every later start of a round waits.
    expect(tries.map((t) => t.cycled)).toEqual([false, false, false, true, false, false, true]);
  });

  it('after a connection drops, tries every host once, the one it was connected to last, then waits', () => {
    const list = new HostList(hosts, () => 0.5);
    const [a, b] = [list.next(), list.next()];
    list.onConnected();
    // Connected to b: after it drops, the others are tried, then b, each at once; then a wait.
    const after = [list.next(), list.next(), list.next(), list.next()];
    expect(after.map((t) => t.host)).toEqual([list.order[2], a.host, b.host, list.order[2]]);
    expect(after.map((t) => t.cycled)).toEqual([false, false, false, true]);
  });

  it('with one host, waits before every attempt but the first after a start or a dropped connection', () => {
    const list = new HostList([{ host: 'h', port: 1 }]);
    expect([list.next(), list.next(), list.next()].map((t) => t.cycled)).toEqual([false, true, true]);
    list.onConnected();
    expect([list.next(), list.next()].map((t) => t.cycled)).toEqual([false, true]);
  });

  it('spreads clients over the hosts', () => {
    const firsts = new Map<number, number>();
    for (let i = 0; i < 3000; i++) {
      const port = new HostList(hosts).next().host.port;
      firsts.set(port, (firsts.get(port) ?? 0) + 1);
    }
    for (const port of [1, 2, 3]) expect(firsts.get(port)).toBeGreaterThan(800);
  });
});

describe('Chroot', () => {
  it('prefixes paths on the way out and strips them on the way back', () => {
    const chroot = new Chroot('/app');
    expect(chroot.prepend('/')).toBe('/app');
    expect(chroot.prepend('/a/b')).toBe('/app/a/b');
    expect(chroot.strip('/app')).toBe('/');
    expect(chroot.strip('/app/a/b')).toBe('/a/b');
    // Not under the chroot: left alone (the server never sends such paths).
    expect(chroot.strip('/apple')).toBe('/apple');
    expect(new Chroot(undefined).prepend('/x')).toBe('/x');
    expect(new Chroot(undefined).strip('/x')).toBe('/x');
  });
});
