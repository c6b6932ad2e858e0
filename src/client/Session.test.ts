import { Session } from './Session';

describe('Session.onEnd', () => {
  it('calls each callback once when the session ends, before the signal’s listeners, unless forgotten', () => {
    const session = new Session(1n);
    const heard: string[] = [];
    session.signal.addEventListener('abort', () => heard.push(`signal (ended: ${session.isEnded})`));
    session.onEnd(() => heard.push(`a (ended: ${session.isEnded})`));
    const forgetB = session.onEnd(() => heard.push('b'));
    session.onEnd(() => heard.push('c'));
    forgetB();
    session.end(new Error('expired'));
    session.end(new Error('again'));
    expect(heard).toEqual(['a (ended: true)', 'c', 'signal (ended: true)']);
  });

  it('skips a callback that one before it forgot, as a removed listener is', () => {
    const session = new Session(2n);
    const heard: string[] = [];
    let forgetSecond = () => {};
    session.onEnd(() => {
      heard.push('first');
      forgetSecond();
    });
    forgetSecond = session.onEnd(() => heard.push('second'));
    session.end(new Error('expired'));
    expect(heard).toEqual(['first']);
  });

  it('never calls a callback given once the session has ended', () => {
    const session = new Session(3n);
    session.end(new Error('expired'));
    const fn = jest.fn();
    session.onEnd(fn)();
    session.end(new Error('again'));
    expect(fn).not.toHaveBeenCalled();
  });

  it('reports a callback that throws, and the others still hear', () => {
    const session = new Session(4n);
    const reported: Array<() => void> = [];
    const nextTick = jest.spyOn(process, 'nextTick').mockImplementation(((fn: () => void) => {
      reported.push(fn);
    }) as typeof process.nextTick);
    try {
      const after = jest.fn();
      session.onEnd(() => {
        throw new Error('listener broke');
      });
      session.onEnd(after);
      session.end(new Error('expired'));
      expect(after).toHaveBeenCalledTimes(1);
      expect(session.signal.aborted).toBe(true);
      expect(reported).toHaveLength(1);
      expect(() => reported[0]()).toThrow('listener broke');
    } finally {
      nextTick.mockRestore();
    }
  });
});
