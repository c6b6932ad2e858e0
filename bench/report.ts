/** Markdown tables, goals and the hand-written SVG chart of the results. */
import type { PeerId } from './peers/types';
import type { Goal, RatioBar } from './scenarios/types';

export function mdTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, rightAligned: readonly number[] = []): string {
  const align = headers.map((_, i) => (rightAligned.includes(i) ? '---:' : '---'));
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(align), ...rows.map(line)].join('\n');
}

/** "0.62×", or "n/a". */
export function fmtRatio(r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : 'n/a';
}

/** A number with a sensible number of digits for a table. */
export function fmtNum(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return 'n/a';
  const a = Math.abs(n);
  if (a >= 1000) return Math.round(n).toLocaleString('en-US');
  if (a >= 100) return n.toFixed(0);
  if (a >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

/**
 * The per-member column of an ensemble run: its header, and a cell of one figure per member
 * ("6.00 / 0 / 0"), in the order `members` names them. Nothing on one server.
 */
export function memberColumn(members: string | undefined, what: string): { header: string[]; cell(values: readonly number[]): string[] } {
  if (members === undefined) return { header: [], cell: () => [] };
  return { header: [`${what} by member (${members})`], cell: (values) => [values.length > 0 ? values.map((v) => (v === 0 ? '0' : fmtNum(v))).join(' / ') : 'n/a'] };
}

/** What an ensemble run's figures are, for a scenario's text: '' on one server. */
export function ensembleNote(members: string | undefined): string {
  if (members === undefined) return '';
  return ` On the ensemble (${members}), session i of every library is on entry i mod the members' number, so the first session is on a follower and every write is forwarded through the leader; server packets and bytes are summed over the members (a member counts its own clients' requests, responses and watch notifications, not the traffic between members), and the last column splits the packets by member.`;
}

/** Judges `value` (a ratio or any figure) against a bound. */
export function judge(goal: string, value: number, bound: number, better: 'lower' | 'higher', figure = fmtRatio(value)): Goal {
  if (!Number.isFinite(value)) return { goal, figure: 'n/a', status: 'not measured' };
  const met = better === 'lower' ? value <= bound : value >= bound;
  return { goal, figure, status: met ? 'met' : 'missed' };
}

export function notMeasured(goal: string, why: string): Goal {
  return { goal, figure: why, status: 'not measured' };
}

export function goalMark(g: Goal): string {
  if (g.status === 'met') return '✅ met';
  if (g.status === 'missed') return '❌ missed';
  return g.status === 'not judged' ? '– not judged (quick run)' : '– not measured';
}

export function goalsTable(goals: readonly Goal[]): string {
  return mdTable(
    ['goal', 'measured', 'status'],
    goals.map((g) => [g.goal, g.figure, goalMark(g)]),
  );
}

const PEER_NAMES: Record<PeerId, string> = { 'zk-recipes': 'zk-recipes', 'zk-recipes-native': 'zk-recipes on the native transport', curator: 'Curator', kazoo: 'kazoo', redis: 'Redis', 'floor-raw': 'the raw-socket floor' };

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A horizontal bar chart of zk-recipes' figure ÷ each other library's, on a log2 scale around 1:
 * each bar grows from the 1× line towards its ratio; green when the ratio favours zk-recipes, red
 * when it does not; a dashed tick marks the goal where there is one.
 */
export function ratioChart(bars: readonly RatioBar[], subtitle: string): string {
  const shown = bars.filter((b) => Number.isFinite(b.ratio) && b.ratio > 0);
  const labelW = 300;
  const plotW = 520;
  const rowH = 22;
  const top = 64;
  const width = labelW + plotW + 90;
  const minExp = -5; // 1/32
  const maxExp = 5; // 32
  const x = (r: number) => {
    const e = Math.max(minExp, Math.min(maxExp, Math.log2(r)));
    return labelW + ((e - minExp) / (maxExp - minExp)) * plotW;
  };
  const height = top + Math.max(1, shown.length) * rowH + 50;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="bold">zk-recipes ÷ Curator and ÷ kazoo (log scale)</text>`,
    `<text x="12" y="42" fill="#555">${escapeXml(subtitle)}</text>`,
  ];
  for (let e = minExp; e <= maxExp; e++) {
    const xe = x(2 ** e);
    out.push(`<line x1="${xe.toFixed(1)}" y1="${top - 8}" x2="${xe.toFixed(1)}" y2="${top + shown.length * rowH}" stroke="${e === 0 ? '#333' : '#e4e4e4'}" stroke-width="${e === 0 ? 1.5 : 1}"/>`);
    const label = e >= 0 ? `${2 ** e}×` : `1/${2 ** -e}`;
    out.push(`<text x="${xe.toFixed(1)}" y="${top + shown.length * rowH + 16}" text-anchor="middle" fill="#555">${label}</text>`);
  }
  shown.forEach((b, i) => {
    const y = top + i * rowH;
    const good = b.better === 'lower' ? b.ratio <= 1 : b.ratio >= 1;
    const x0 = x(1);
    const x1 = x(b.ratio);
    const left = Math.min(x0, x1);
    const w = Math.max(1, Math.abs(x1 - x0));
    const arrow = b.better === 'lower' ? '↓' : '↑';
    out.push(`<text x="${labelW - 8}" y="${y + 15}" text-anchor="end">${escapeXml(`${b.metric} ${arrow} vs ${PEER_NAMES[b.versus]}`)}</text>`);
    out.push(`<rect x="${left.toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="${rowH - 8}" fill="${good ? '#2e9e5b' : '#d0453a'}"/>`);
    if (b.goal !== undefined) {
      const xg = x(b.goal);
      out.push(`<line x1="${xg.toFixed(1)}" y1="${y + 1}" x2="${xg.toFixed(1)}" y2="${y + rowH - 1}" stroke="#222" stroke-width="1.5" stroke-dasharray="3,2"/>`);
    }
    out.push(`<text x="${(Math.max(x0, x1) + 6).toFixed(1)}" y="${y + 15}" fill="#222">${b.ratio.toFixed(2)}×</text>`);
  });
  if (shown.length === 0) out.push(`<text x="${labelW}" y="${top + 15}">no ratios measured</text>`);
  out.push(
    `<text x="12" y="${height - 12}" fill="#555">↓ lower is better (latency, packets) · ↑ higher is better (throughput) · green favours zk-recipes · dashed tick: goal</text>`,
  );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
