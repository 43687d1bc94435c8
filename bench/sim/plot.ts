/** A dependency-free SVG line chart: small-store latency (log scale) against backlog size, one line per design. */
export interface Series {
  label: string;
  /** One value per x position, in milliseconds (NaN = missing). */
  p99: number[];
  p50: number[];
}

const COLOURS = ['#1b6ac9', '#d1495b', '#edae49', '#00798c', '#6a4c93', '#3d9a50', '#7a7a7a'];

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const fmtMs = (ms: number): string =>
  ms >= 60_000
    ? `${+(ms / 60_000).toFixed(1)} min`
    : ms >= 1000
      ? `${+(ms / 1000).toFixed(1)} s`
      : `${Math.round(ms)} ms`;

export const latencyPlot = (
  title: string,
  backlogs: readonly number[],
  series: readonly Series[],
): string => {
  const width = 900;
  const height = 520;
  const left = 80;
  const right = 300;
  const top = 50;
  const bottom = 70;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const values = series.flatMap((s) => [...s.p99, ...s.p50]).filter((v) => Number.isFinite(v) && v > 0);
  const ticks = [1, 10, 100, 1000, 10_000, 60_000, 600_000, 3_600_000, 36_000_000];
  const min = Math.min(...values, 10);
  const max = Math.max(...values, 100);
  const lo = [...ticks].reverse().find((t) => t <= min) ?? 1;
  const hi = ticks.find((t) => t >= max) ?? max;
  const x = (i: number): number =>
    left + (backlogs.length === 1 ? plotW / 2 : (i * plotW) / (backlogs.length - 1));
  const y = (v: number): number =>
    top +
    plotH -
    ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="28" font-size="15" font-weight="bold">${esc(title)}</text>`,
  );
  for (const v of ticks.filter((t) => t >= lo && t <= hi)) {
    const yy = y(v).toFixed(1);
    out.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${yy}" y2="${yy}" stroke="#ddd"/>`,
      `<text x="${left - 8}" y="${yy}" text-anchor="end" dominant-baseline="middle">${fmtMs(v)}</text>`,
    );
  }
  backlogs.forEach((b, i) => {
    const xx = x(i).toFixed(1);
    out.push(
      `<line x1="${xx}" x2="${xx}" y1="${top}" y2="${top + plotH}" stroke="#eee"/>`,
      `<text x="${xx}" y="${top + plotH + 18}" text-anchor="middle">${b.toLocaleString('en-US')}</text>`,
    );
  });
  out.push(
    `<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#444"/>`,
    `<text x="${left + plotW / 2}" y="${height - 22}" text-anchor="middle">backlog on one store (tasks)</text>`,
    `<text transform="translate(18 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">small-store delivery latency (log)</text>`,
  );
  series.forEach((s, k) => {
    const colour = COLOURS[k % COLOURS.length] as string;
    const line = (vals: number[], dash: string): void => {
      const pts = vals
        .map((v, i) => (Number.isFinite(v) ? `${x(i).toFixed(1)},${y(v).toFixed(1)}` : ''))
        .filter((p) => p !== '');
      if (pts.length > 0) {
        out.push(
          `<polyline points="${pts.join(' ')}" fill="none" stroke="${colour}" stroke-width="2"${dash}/>`,
          ...pts.map((p) => {
            const [cx, cy] = p.split(',');
            return `<circle cx="${cx}" cy="${cy}" r="3" fill="${colour}"/>`;
          }),
        );
      }
    };
    line(s.p99, '');
    line(s.p50, ' stroke-dasharray="4 3" opacity="0.6"');
    const ly = top + 10 + k * 22;
    out.push(
      `<line x1="${left + plotW + 20}" x2="${left + plotW + 45}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`,
      `<text x="${left + plotW + 52}" y="${ly}" dominant-baseline="middle">${esc(s.label)}</text>`,
    );
  });
  const ny = top + 10 + series.length * 22 + 10;
  out.push(`<text x="${left + plotW + 20}" y="${ny}" fill="#555">solid: p99, dashed: p50</text>`, `</svg>`);
  return out.join('\n') + '\n';
};
