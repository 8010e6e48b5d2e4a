// A producer's weekly schedule: when the machine offers its cycles. Written as people write it,
// "Mon-Fri 18:00-08:00; Sat,Sun 00:00-24:00": entries separated by ";", each a set of days (names,
// ranges, "daily", "weekdays", "weekends") and a time range in the machine's own local time. A
// range that ends before it starts runs past midnight into the next day ("Fri 22:00-06:00" ends on
// Saturday morning). Pure: the caller says what time it is.

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
const DAY_NAMES = "Mon, Tue, Wed, Thu, Fri, Sat, Sun, daily, weekdays or weekends";
const MINUTES_PER_DAY = 1440;
export const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY;
export const MAX_SCHEDULE_CHARS = 200;
export const MAX_SCHEDULE_ENTRIES = 14;

/** A window in minutes of the week from Monday 00:00; `end` may pass the week's end (it wraps). */
export interface ScheduleWindow {
  start: number;
  end: number;
}

export type ScheduleParse = { ok: true; windows: ScheduleWindow[] } | { ok: false; message: string };

const FULL_NAMES = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/** Monday is 0; a day is its three-letter or full English name, in any case. */
function dayIndex(name: string): number {
  const lower = name.trim().toLowerCase();
  const short = DAYS.indexOf(lower as (typeof DAYS)[number]);
  return short >= 0 ? short : FULL_NAMES.indexOf(lower);
}

function parseDays(text: string, entry: string): number[] | string {
  const lower = text.toLowerCase();
  if (lower === "daily" || lower === "every day") return [0, 1, 2, 3, 4, 5, 6];
  if (lower === "weekdays") return [0, 1, 2, 3, 4];
  if (lower === "weekends") return [5, 6];
  const out = new Set<number>();
  for (const part of text.split(",")) {
    const ends = part.split("-");
    if (ends.length > 2) return `"${entry}": "${part.trim()}" is not a day or a range of days (use ${DAY_NAMES})`;
    const [a, b] = [dayIndex(ends[0]!), dayIndex(ends[ends.length - 1]!)];
    const wrong = a < 0 ? ends[0]! : b < 0 ? ends[ends.length - 1]! : null;
    if (wrong !== null) return `"${entry}": "${wrong.trim()}" is not a day (use ${DAY_NAMES})`;
    // A range may wrap past Sunday: "Fri-Mon" is Friday to Monday.
    for (let d = a; ; d = (d + 1) % 7) {
      out.add(d);
      if (d === b) break;
    }
  }
  return [...out].sort((x, y) => x - y);
}

function parseTime(text: string): number | null {
  const m = /^(\d{1,2}):(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (min > 59 || h > 24 || (h === 24 && min !== 0)) return null;
  return h * 60 + min;
}

/** Parses a schedule; a refusal names the entry and what is wrong with it. */
export function parseSchedule(text: string): ScheduleParse {
  if (text.length > MAX_SCHEDULE_CHARS) return { ok: false, message: `A schedule is at most ${MAX_SCHEDULE_CHARS} characters.` };
  const entries = text.split(";").map((e) => e.trim()).filter((e) => e.length > 0);
  if (entries.length === 0) return { ok: false, message: 'A schedule needs at least one entry, such as "Mon-Fri 18:00-08:00".' };
  if (entries.length > MAX_SCHEDULE_ENTRIES) return { ok: false, message: `A schedule has at most ${MAX_SCHEDULE_ENTRIES} entries.` };
  const windows: ScheduleWindow[] = [];
  for (const entry of entries) {
    const m = /^(.+?)\s+(\S+)$/.exec(entry);
    if (!m) return { ok: false, message: `"${entry}": write days then hours, such as "Mon-Fri 18:00-08:00".` };
    const days = parseDays(m[1]!.trim(), entry);
    if (typeof days === "string") return { ok: false, message: days };
    const [fromText, toText, extra] = m[2]!.split("-");
    const from = fromText === undefined ? null : parseTime(fromText);
    const to = toText === undefined ? null : parseTime(toText);
    if (extra !== undefined || from === null || to === null) {
      return { ok: false, message: `"${entry}": "${m[2]}" is not a time range (write HH:MM-HH:MM, 00:00 to 24:00).` };
    }
    if (from === to) return { ok: false, message: `"${entry}": the range starts and ends at the same time; use 00:00-24:00 for a whole day.` };
    const length = to > from ? to - from : MINUTES_PER_DAY - from + to;
    for (const d of days) windows.push({ start: d * MINUTES_PER_DAY + from, end: d * MINUTES_PER_DAY + from + length });
  }
  return { ok: true, windows };
}

/** Minutes since Monday 00:00 of the week `at` falls in, in the machine's local time. */
export function minuteOfWeek(at: Date): number {
  const day = (at.getDay() + 6) % 7; // getDay: Sunday is 0
  return day * MINUTES_PER_DAY + at.getHours() * 60 + at.getMinutes();
}

export function inWindows(windows: readonly ScheduleWindow[], minute: number): boolean {
  for (const w of windows) {
    if (minute >= w.start && minute < w.end) return true;
    // A window that runs past Sunday midnight covers the start of the next week.
    if (w.end > MINUTES_PER_WEEK && minute < w.end - MINUTES_PER_WEEK) return true;
  }
  return false;
}

/** Whether the schedule lets the machine work at `at` (no schedule: always). */
export function inSchedule(schedule: string | null | undefined, at: Date): boolean {
  if (!schedule) return true;
  const parsed = parseSchedule(schedule);
  return parsed.ok ? inWindows(parsed.windows, minuteOfWeek(at)) : true;
}

/** Minutes from `at` until the schedule next switches the machine on or off; null when it never does. */
export function minutesToNextChange(schedule: string | null | undefined, at: Date): number | null {
  if (!schedule) return null;
  const parsed = parseSchedule(schedule);
  if (!parsed.ok) return null;
  const start = minuteOfWeek(at);
  const now = inWindows(parsed.windows, start);
  for (let k = 1; k <= MINUTES_PER_WEEK; k++) {
    if (inWindows(parsed.windows, (start + k) % MINUTES_PER_WEEK) !== now) return k;
  }
  return null;
}
