import { sinceRead, type Command, type Report } from './command';
import { plural, table } from './format';
import { LATCH_NAMES, LAYOUTS_OF, MUTEX_NAMES, layoutFor, sortLockNodes } from './layouts';
import type { Reader } from './NodeReader';
import { nodeCells, nodeView, type NodeView } from './nodeView';

/** A participant of an election: its node, and its id (the node's data as UTF-8, as Curator reads it). */
export interface ParticipantView extends NodeView {
  readonly id: string;
  readonly isLeader: boolean;
}

/** What `zk-recipes leader <path>` reports. */
export interface LeaderReport extends Report {
  readonly command: 'leader';
  /** The election found; null for a node without children (nobody takes part). */
  readonly recipe: 'leaderLatch' | 'leaderSelector' | null;
  /** The first participant in election order; null when there is none. */
  readonly leader: ParticipantView | null;
  /** Every participant in election order, the leader first. */
  readonly participants: readonly ParticipantView[];
  /** How many children are no nodes of this election. */
  readonly others: number;
}

async function readLeader(reader: Reader, path: string): Promise<LeaderReport> {
  const at = new Date();
  const listing = await reader.list(path);
  const layout = layoutFor(path, 'an election', listing, LAYOUTS_OF.leader);
  const base = { command: 'leader' as const, path, at: at.toISOString(), others: layout?.others.length ?? 0 };
  if (layout === undefined) return { ...base, recipe: null, leader: null, participants: [] };
  const latch = layout.kind === 'leaderLatch';
  // As Curator's getParticipants: election order, and a node gone while we read is skipped, so
  // the first one still there leads.
  const nodes = await reader.nodes(path, sortLockNodes(layout.members, latch ? LATCH_NAMES : MUTEX_NAMES));
  const participants = nodes.map((n, i) => ({ ...nodeView(n, at.getTime()), id: (n.data ?? Buffer.alloc(0)).toString('utf8'), isLeader: i === 0 }));
  return { ...base, recipe: latch ? 'leaderLatch' : 'leaderSelector', leader: participants[0] ?? null, participants };
}

/** The one-line summary of an election. */
export function leaderSummary(report: Pick<LeaderReport, 'recipe' | 'leader' | 'participants'>): string {
  if (report.recipe === null || report.leader === null) return 'no participants: no leader';
  const name = report.recipe === 'leaderLatch' ? 'LeaderLatch' : 'LeaderSelector';
  return `${name}: leader ${JSON.stringify(report.leader.id)}, ${plural(report.participants.length, 'participant')}`;
}

function render(report: LeaderReport, nowMs: number): string {
  const later = sinceRead(report, nowMs);
  const lines = [`${report.path}  ${leaderSummary(report)}`];
  if (report.participants.length > 0) {
    const rows = report.participants.map((p) => {
      const [name, session, age] = nodeCells(p, later);
      return [p.isLeader ? 'leader' : 'participant', JSON.stringify(p.id), name, session, age];
    });
    lines.push(...table([['ROLE', 'ID', 'NODE', 'SESSION', 'AGE'], ...rows]).map((l) => `  ${l}`));
  }
  if (report.others > 0) lines.push(`  ${plural(report.others, 'other child', 'other children')} ignored`);
  return lines.join('\n');
}

/** `zk-recipes leader <path>`. */
export const leaderCommand: Command<LeaderReport> = {
  name: 'leader',
  summary: 'the leader and the participants (LeaderLatch, LeaderSelector)',
  read: readLeader,
  render,
};
