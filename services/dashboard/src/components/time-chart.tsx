import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

interface Props {
  /** x in Unix seconds, then one column per series. */
  data: readonly Float64Array[];
  /** How the hovered bucket's time reads in the legend. */
  formatTime: (seconds: number) => string;
  /** The series' names, one per column after x; the first is drawn solid, the others dashed, each in its own colour and dash. */
  labels: readonly string[];
  /** The IANA zone the time axis reads in (default: the browser's). */
  timeZone?: string;
  /** Called once the chart has drawn this data (the page measures from the data's arrival). */
  onDrawn?: () => void;
}

/** The dashes of the second, third and fourth series: told apart by shape as well as colour. */
const DASHES = [
  [6, 4],
  [2, 3],
  [10, 3, 2, 3],
];

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** Whether the system is in dark mode, following changes: the canvas takes its colours when drawn. */
function useDarkMode(): boolean {
  const query = matchMedia('(prefers-color-scheme: dark)');
  const [dark, setDark] = useState(query.matches);
  useEffect(() => {
    const change = () => setDark(query.matches);
    query.addEventListener('change', change);
    return () => query.removeEventListener('change', change);
  }, []);
  return dark;
}

/**
 * The clicks over time, drawn on a canvas by uPlot (about 50 KB, and it draws a year by hour,
 * 8,760 points, in a few milliseconds). Hovering a point shows its bucket and clicks in the legend
 * above the chart; the page offers the same numbers as a table.
 */
export function TimeChart({ data, formatTime, labels, timeZone, onDrawn }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const dark = useDarkMode();
  useEffect(() => {
    const element = host.current!;
    const text = cssVar('--text-muted');
    const grid = cssVar('--border');
    const accent = cssVar('--accent');
    let reported = false;
    const chart = new uPlot(
      {
        width: element.clientWidth || 320,
        height: 240,
        ...(timeZone && { tzDate: (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), timeZone) }),
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [
          { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
          { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 48 },
        ],
        cursor: { drag: { x: false, y: false }, points: { size: 8 } },
        legend: { live: true },
        series: [
          { label: 'Time', value: (_u, value) => (value == null ? '—' : formatTime(value)) },
          ...labels.map((label, index) => ({
            label,
            stroke: index === 0 ? accent : cssVar(`--series-${index}`) || text,
            width: index === 0 ? 2 : 1.5,
            dash: index === 0 ? undefined : DASHES[(index - 1) % DASHES.length],
            fill: index === 0 ? `${accent}22` : undefined,
            points: { show: data[0]!.length <= 120 },
            value: (_u: uPlot, value: number | null) => (value == null ? '—' : String(value)),
          })),
        ],
        hooks: {
          draw: [
            () => {
              if (!reported) {
                reported = true;
                onDrawn?.();
              }
            },
          ],
        },
      },
      data as unknown as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: element.clientWidth, height: 240 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [data, labels.join('\n'), timeZone, dark]);
  return <div class="time-chart" ref={host} />;
}
