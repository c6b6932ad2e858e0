import { ensembleHosts } from './ensembleConfig';

describe('ensembleHosts', () => {
  it('lists every member with a client address, in server id order, as Curator does', () => {
    const config = [
      'server.3=10.0.0.3:2888:3888:participant;10.0.0.3:2183',
      'server.1=10.0.0.1:2888:3888:participant;10.0.0.1:2181',
      'server.2=10.0.0.2:2888:3888:observer;10.0.0.2:2182',
      'version=100000003',
    ].join('\n');
    expect(ensembleHosts(config)).toBe('10.0.0.1:2181,10.0.0.2:2182,10.0.0.3:2183');
  });

  it('names a member listening on every interface, or given a port alone, by its quorum host', () => {
    const config = ['server.1=zk1.example:2888:3888:participant;0.0.0.0:2181', 'server.2=zk2.example:2888:3888;2182', 'server.3=[fd00::3]:2888:3888:participant;[::]:2183'].join('\n');
    expect(ensembleHosts(config)).toBe('zk1.example:2181,zk2.example:2182,[fd00::3]:2183');
  });

  it('keeps an IPv6 client address in brackets', () => {
    expect(ensembleHosts('server.1=[fd00::1]:2888:3888:participant;[fd00::1]:2181\n')).toBe('[fd00::1]:2181');
  });

  it('says nothing for a standalone server, an ensemble without client addresses, or lines it cannot read', () => {
    expect(ensembleHosts('')).toBeUndefined();
    expect(ensembleHosts('server.1=127.0.0.1:2888:3888:participant\nserver.2=127.0.0.1:2889:3889:participant\nversion=0')).toBeUndefined();
    expect(ensembleHosts('server.1=127.0.0.1:2888:3888;127.0.0.1:notaport\nserver.x=a:1:2;a:3')).toBeUndefined();
  });

  it('leaves out a member without a client address among members with one', () => {
    expect(ensembleHosts('server.1=a:1:2:participant\nserver.2=b:1:2:participant;b:2182')).toBe('b:2182');
  });
});
