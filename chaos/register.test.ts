import type { RegisterEvent } from './history';
import { Register, type RegisterRequest } from './register';

function register(): { judge: (r: Omit<RegisterRequest, 'worker'>) => ReturnType<Register['judge']>; events: RegisterEvent[] } {
  const events: RegisterEvent[] = [];
  const r = new Register((e) => events.push(e));
  return { judge: (req) => r.judge({ worker: 0, ...req }), events };
}

describe('the register', () => {
  it('accepts increments under rising tokens and refuses a lower one', () => {
    const { judge } = register();
    expect(judge({ res: 'mutex', op: 'read', token: '10', hold: 'a' })).toMatchObject({ accepted: true, value: 0 });
    expect(judge({ res: 'mutex', op: 'write', token: '10', hold: 'a', expect: 0, value: 1 })).toMatchObject({ accepted: true });
    expect(judge({ res: 'mutex', op: 'read', token: '12', hold: 'b' })).toMatchObject({ accepted: true, value: 1 });
    expect(judge({ res: 'mutex', op: 'write', token: '10', hold: 'a', expect: 1, value: 2 })).toMatchObject({ accepted: false });
  });

  it('fences a holder that read before a newer holder read: its late write is refused', () => {
    const { judge, events } = register();
    judge({ res: 'mutex', op: 'read', token: '10', hold: 'stale' });
    expect(judge({ res: 'mutex', op: 'read', token: '11', hold: 'fresh' })).toMatchObject({ accepted: true, inside: ['stale'] });
    expect(judge({ res: 'mutex', op: 'write', token: '10', hold: 'stale', expect: 0, value: 1 })).toMatchObject({ accepted: false });
    expect(judge({ res: 'mutex', op: 'write', token: '11', hold: 'fresh', expect: 0, value: 1 })).toMatchObject({ accepted: true });
    expect(events.map((e) => [e.op, e.hold, e.accepted])).toEqual([
      ['read', 'stale', true],
      ['read', 'fresh', true],
      ['write', 'stale', false],
      ['write', 'fresh', true],
    ]);
  });

  it('lets readers check under tokens above every writer, and makes writers beat the readers', () => {
    const { judge } = register();
    judge({ res: 'rw', op: 'read', token: '10', hold: 'w1' });
    expect(judge({ res: 'rw', op: 'check', token: '12', hold: 'r1' })).toMatchObject({ accepted: true, inside: ['w1'] });
    expect(judge({ res: 'rw', op: 'check', token: '11', hold: 'r0' })).toMatchObject({ accepted: true });
    expect(judge({ res: 'rw', op: 'write', token: '10', hold: 'w1', expect: 0, value: 1 })).toMatchObject({ accepted: false });
    judge({ res: 'rw', op: 'read', token: '20', hold: 'w2' });
    expect(judge({ res: 'rw', op: 'check', token: '15', hold: 'r2' })).toMatchObject({ accepted: false });
  });

  it('counts who is inside the semaphore without fencing', () => {
    const { judge } = register();
    for (const h of ['a', 'b', 'c']) judge({ res: 'sem', op: 'enter', token: '1', hold: h });
    expect(judge({ res: 'sem', op: 'enter', token: '0', hold: 'd' }).inside).toEqual(['a', 'b', 'c', 'd']);
    judge({ res: 'sem', op: 'exit', token: '1', hold: 'a' });
    expect(judge({ res: 'sem', op: 'enter', token: '2', hold: 'e' }).inside).toEqual(['b', 'c', 'd', 'e']);
  });
});
