import { addListener, listenersOf, removeListener, type ListenerSlots } from './listenerSlots';

interface Events {
  ping(n: number): void;
  pong(): void;
}

describe('listener slots', () => {
  it('call listeners in the order added, one added twice twice, as an EventEmitter does', () => {
    const slots: ListenerSlots<Events> = {};
    const [a, b] = [(_n: number) => undefined, (_n: number) => undefined];
    expect(listenersOf(slots, 'ping')).toEqual([]);
    addListener(slots, 'ping', a);
    expect(listenersOf(slots, 'ping')).toEqual([a]);
    addListener(slots, 'ping', b);
    addListener(slots, 'ping', a);
    expect(listenersOf(slots, 'ping')).toEqual([a, b, a]);
    expect(listenersOf(slots, 'pong')).toEqual([]);
  });

  it('remove the listener added last, once, and nothing for one never added', () => {
    const slots: ListenerSlots<Events> = {};
    const [a, b, c] = [(_n: number) => undefined, (_n: number) => undefined, (_n: number) => undefined];
    addListener(slots, 'ping', a);
    addListener(slots, 'ping', b);
    addListener(slots, 'ping', a);
    removeListener(slots, 'ping', c);
    removeListener(slots, 'ping', a);
    expect(listenersOf(slots, 'ping')).toEqual([a, b]);
    removeListener(slots, 'ping', a);
    expect(listenersOf(slots, 'ping')).toEqual([b]);
    removeListener(slots, 'ping', b);
    expect(listenersOf(slots, 'ping')).toEqual([]);
    expect(slots).toEqual({});
  });

  it('give a copy: a listener removed or added while they are called changes the next call only', () => {
    const slots: ListenerSlots<Events> = {};
    const calls: string[] = [];
    const second = () => calls.push('second');
    const first = () => {
      calls.push('first');
      removeListener(slots, 'pong', second);
      addListener(slots, 'pong', () => calls.push('third'));
    };
    addListener(slots, 'pong', first);
    addListener(slots, 'pong', second);
    for (const l of listenersOf(slots, 'pong')) l();
    expect(calls).toEqual(['first', 'second']);
    expect(listenersOf(slots, 'pong')).toHaveLength(2);
  });
});
