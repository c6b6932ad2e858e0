import type { ZkClient } from '../../src/recipeKit';
import { handOffsWithinProcess, isHere, listenHeld, listenedNodes, standsHere, tellHeld } from './localHandOff';

const client = (namespace?: string) => ({ namespace }) as unknown as ZkClient;

describe('localHandOff', () => {
  afterEach(() => handOffsWithinProcess(true));

  it('tells the listeners of a node once, then forgets them', () => {
    const heard: string[] = [];
    const c = client();
    listenHeld(c, '/l/_c_1-lock-0000000001', () => heard.push('one'));
    listenHeld(c, '/l/_c_2-lock-0000000002', () => heard.push('two'));
    expect(tellHeld(c, '/l/_c_1-lock-0000000001')).toBe(true);
    expect(tellHeld(c, '/l/_c_1-lock-0000000001')).toBe(false);
    expect(heard).toEqual(['one']);
    expect(listenedNodes()).toBe(1);
    expect(tellHeld(c, '/l/_c_2-lock-0000000002')).toBe(true);
    expect(heard).toEqual(['one', 'two']);
    expect(listenedNodes()).toBe(0);
  });

  it('keeps nothing once a listener stops, and tells no one of a win nobody waits for', () => {
    const heard: string[] = [];
    const c = client();
    const stop = listenHeld(c, '/l/a', () => heard.push('a'));
    stop();
    stop();
    expect(listenedNodes()).toBe(0);
    expect(tellHeld(c, '/l/a')).toBe(false);
    expect(heard).toEqual([]);
  });

  it('tells only a listener of the same node in the same namespace', () => {
    const heard: string[] = [];
    const stop = listenHeld(client('app'), '/l/a', () => heard.push('a'));
    expect(tellHeld(client(), '/l/a')).toBe(false);
    expect(tellHeld(client('other'), '/l/a')).toBe(false);
    expect(tellHeld(client('app'), '/l/b')).toBe(false);
    expect(heard).toEqual([]);
    expect(tellHeld(client('app'), '/l/a')).toBe(true);
    expect(heard).toEqual(['a']);
    stop();
    expect(listenedNodes()).toBe(0);
  });

  it('tells nothing while turned off', () => {
    const heard: string[] = [];
    const c = client();
    const stop = listenHeld(c, '/l/a', () => heard.push('a'));
    handOffsWithinProcess(false);
    expect(tellHeld(c, '/l/a')).toBe(false);
    handOffsWithinProcess(true);
    expect(tellHeld(c, '/l/a')).toBe(true);
    expect(heard).toEqual(['a']);
    stop();
  });

  it('tells the listeners of a node each time it starts to stand in line, and keeps them for its win', () => {
    const heard: string[] = [];
    const c = client();
    const stop = listenHeld(
      c,
      '/l/a',
      () => heard.push('held'),
      () => heard.push('stands'),
    );
    listenHeld(c, '/l/b', () => heard.push('b held'));
    const leave = standsHere(c, '/l/a');
    standsHere(client('other'), '/l/a')();
    standsHere(c, '/l/b')();
    expect(heard).toEqual(['stands']);
    handOffsWithinProcess(false);
    standsHere(c, '/l/a')();
    handOffsWithinProcess(true);
    expect(heard).toEqual(['stands']);
    leave();
    expect(tellHeld(c, '/l/a')).toBe(true);
    expect(heard).toEqual(['stands', 'held']);
    stop();
    expect(tellHeld(c, '/l/b')).toBe(true);
    expect(listenedNodes()).toBe(0);
  });

  it('knows the nodes in line here until each leaves, once however often it is told', () => {
    const c = client('app');
    const leaveA = standsHere(c, '/l/a');
    const leaveA2 = standsHere(c, '/l/a');
    expect(isHere(c, '/l/a')).toBe(true);
    expect(isHere(client(), '/l/a')).toBe(false);
    expect(isHere(c, '/l/b')).toBe(false);
    leaveA();
    leaveA();
    expect(isHere(c, '/l/a')).toBe(true);
    handOffsWithinProcess(false);
    expect(isHere(c, '/l/a')).toBe(false);
    handOffsWithinProcess(true);
    leaveA2();
    expect(isHere(c, '/l/a')).toBe(false);
    expect(listenedNodes()).toBe(0);
  });
});
