/**
 * English spoken numbers → digits. The rules, in the order they are tried at each word:
 * - Times: "half past three" → 3:30, "quarter to four" → 3:45, "ten past six" → 6:10,
 *   "twenty minutes to five" → 4:40, "three o'clock" → 3:00, "seven thirty p m" → 7:30 PM,
 *   "nine oh five am" → 9:05 AM, "fourteen hundred hours" → 14:00. A bare "three thirty" is not a
 *   time (nothing says it is one) and falls to the rules below.
 * - Digit strings, read digit by digit or in pairs, as phone, card and account numbers and years
 *   are read: two or more groups that are each one digit ("zero"…"nine"; "oh" after the first
 *   group; "double five", "triple seven") or a two-digit number ("twelve", "forty two"), making
 *   at least three digits: "four one one one" → 4111, "nineteen eighty four" → 1984,
 *   "twenty twenty" → 2020, "nineteen oh five" → 1905, "forty two forty two" → 4242,
 *   "one twenty" → 120; after the first group a digit and "hundred" is three digits ("one eight
 *   hundred five five five…" → 1800555…). A string followed by "hundred", "thousand"… is a cardinal instead.
 * - Cardinals: "one hundred and twenty three" → 123, "two thousand and five" → 2005,
 *   "a million" → 1000000, "twelve hundred" → 1200. No thousands separators are written.
 * - Ordinals: a cardinal whose last word is an ordinal: "twenty first" → 21st, "one hundredth" →
 *   100th, "twelfth" → 12th.
 * - Decimals: a cardinal, "point", one or more digits: "three point one four" → 3.14,
 *   "zero point five" → 0.5. A scale after it stays a word: "1.5 million".
 * - Percentages: a number then "percent" / "per cent": "fifty percent" → 50%, "two point five
 *   percent" → 2.5%.
 * - Currency: a number then a currency word: "five dollars" → $5, "twenty pounds" → £20, "ten
 *   euros" → €10, "five dollars and twenty five cents" → $5.25, "fifty cents" → 50¢, "ten pence" →
 *   10p, "two point five million dollars" → $2.5 million.
 * - A lone single-digit word ("one", "nine", "first", "ninth") stays a word ("one of them", "the
 *   first time"), unless a unit, percent or currency word follows it.
 * A word carrying punctuation ends a number ("five, six" is two numbers), and that punctuation
 * stays on the number's token. Words already written in digits pass through unchanged.
 */
import type { InverseNumberWords, NormalisedToken } from './types.js';

/**
 * A table of words as a Map: a transcript's word must be one of its own keys, never a name every
 * object inherits ("constructor" is an English word; a plain object would answer it with a function).
 */
function wordTable<T = number>(entries: Record<string, T>): ReadonlyMap<string, T> {
  return new Map(Object.entries(entries));
}

const UNITS = wordTable({ zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9 });
const TEENS = wordTable({
  ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
});
const TENS = wordTable({ twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 });
const ORDINAL_UNITS = wordTable({ first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9 });
const ORDINAL_TEENS = wordTable({
  tenth: 10, eleventh: 11, twelfth: 12, thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16, seventeenth: 17, eighteenth: 18, nineteenth: 19,
});
const ORDINAL_TENS = wordTable({
  twentieth: 20, thirtieth: 30, fortieth: 40, fiftieth: 50, sixtieth: 60, seventieth: 70, eightieth: 80, ninetieth: 90,
});
const SCALES = wordTable({ thousand: 1e3, million: 1e6, billion: 1e9, trillion: 1e12 });
const ORDINAL_SCALES = wordTable({ thousandth: 1e3, millionth: 1e6, billionth: 1e9, trillionth: 1e12 });
/** Currency words: the symbol, and whether it is the hundredth of a main unit. */
const CURRENCIES = wordTable<{ symbol: string; minor: boolean }>({
  dollar: { symbol: '$', minor: false },
  dollars: { symbol: '$', minor: false },
  bucks: { symbol: '$', minor: false },
  pound: { symbol: '£', minor: false },
  pounds: { symbol: '£', minor: false },
  euro: { symbol: '€', minor: false },
  euros: { symbol: '€', minor: false },
  yen: { symbol: '¥', minor: false },
  rupee: { symbol: '₹', minor: false },
  rupees: { symbol: '₹', minor: false },
  cent: { symbol: '¢', minor: true },
  cents: { symbol: '¢', minor: true },
  penny: { symbol: 'p', minor: true },
  pence: { symbol: 'p', minor: true },
});
const MINOR_OF: Record<string, string> = { $: 'cents', '€': 'cents', '£': 'pence', '₹': 'paise' };

/** One piece of a word: "twenty-three" is two atoms of one word; "p.m." is one atom "pm". */
interface Atom {
  text: string;
  word: number;
}

/** A number found at an atom: its text and the atom after it. */
interface Found {
  text: string;
  end: number;
}

interface Under100 {
  value: number;
  end: number;
  ordinal: boolean;
  /** A single word of value < 10 (a unit), a two-digit word or pair, … */
  shape: 'unit' | 'two-digit';
}

const PUNCT_LEAD = /^[("'[¿¡]+/;
const PUNCT_TRAIL = /[.,!?;:)"'\]]+$/;

function splitPunctuation(word: string): { lead: string; core: string; trail: string } {
  const lead = PUNCT_LEAD.exec(word)?.[0] ?? '';
  let rest = word.slice(lead.length);
  // "a.m." and "p.m." keep their dots as part of the word.
  const ampm = /^([ap])\.m\.?(.*)$/i.exec(rest);
  if (ampm) return { lead, core: `${ampm[1]}m`, trail: ampm[2] ?? '' };
  const trail = PUNCT_TRAIL.exec(rest)?.[0] ?? '';
  rest = rest.slice(0, rest.length - trail.length);
  return { lead, core: rest, trail };
}

const isNumberWord = (w: string) =>
  UNITS.has(w) || TEENS.has(w) || TENS.has(w) || ORDINAL_UNITS.has(w) || ORDINAL_TEENS.has(w) || ORDINAL_TENS.has(w) || w === 'hundred' || w === 'hundredth' || SCALES.has(w) || ORDINAL_SCALES.has(w);

function ordinalSuffix(n: number): string {
  const lastTwo = n % 100;
  if (lastTwo >= 11 && lastTwo <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
}

class Parser {
  constructor(
    private readonly atoms: Atom[],
    /** breakBefore[i]: atom i cannot continue a number that atom i-1 is in (punctuation between them). */
    private readonly breakBefore: boolean[],
  ) {}

  /** The atom at k as long as it may follow atom `from` in one number, else undefined. */
  at(k: number, from: number): string | undefined {
    if (k >= this.atoms.length) return undefined;
    for (let i = from + 1; i <= k; i++) if (this.breakBefore[i]) return undefined;
    return this.atoms[k]!.text;
  }

  under100(j: number, start: number): Under100 | undefined {
    const w = this.at(j, start);
    if (w === undefined) return undefined;
    if (TENS.has(w)) {
      const next = this.at(j + 1, start);
      if (next !== undefined && UNITS.has(next) && UNITS.get(next)! > 0) return { value: TENS.get(w)! + UNITS.get(next)!, end: j + 2, ordinal: false, shape: 'two-digit' };
      if (next !== undefined && ORDINAL_UNITS.has(next)) return { value: TENS.get(w)! + ORDINAL_UNITS.get(next)!, end: j + 2, ordinal: true, shape: 'two-digit' };
      return { value: TENS.get(w)!, end: j + 1, ordinal: false, shape: 'two-digit' };
    }
    if (ORDINAL_TENS.has(w)) return { value: ORDINAL_TENS.get(w)!, end: j + 1, ordinal: true, shape: 'two-digit' };
    if (TEENS.has(w)) return { value: TEENS.get(w)!, end: j + 1, ordinal: false, shape: 'two-digit' };
    if (ORDINAL_TEENS.has(w)) return { value: ORDINAL_TEENS.get(w)!, end: j + 1, ordinal: true, shape: 'two-digit' };
    if (UNITS.has(w)) return { value: UNITS.get(w)!, end: j + 1, ordinal: false, shape: 'unit' };
    if (ORDINAL_UNITS.has(w)) return { value: ORDINAL_UNITS.get(w)!, end: j + 1, ordinal: true, shape: 'unit' };
    return undefined;
  }

  /** 0-999: "three", "twenty one", "one hundred and five", "a hundred", "nineteen hundred". */
  below1000(j: number, start: number): Under100 | undefined {
    let head = this.under100(j, start);
    if (!head && this.at(j, start) === 'a' && ['hundred', 'hundredth'].includes(this.at(j + 1, start) ?? '')) head = { value: 1, end: j + 1, ordinal: false, shape: 'unit' };
    if (!head || head.ordinal) return head;
    const scale = this.at(head.end, start);
    if ((scale !== 'hundred' && scale !== 'hundredth') || head.value === 0) return head;
    const hundreds = head.value * 100;
    if (scale === 'hundredth') return { value: hundreds, end: head.end + 1, ordinal: true, shape: 'two-digit' };
    let k = head.end + 1;
    const hasAnd = this.at(k, start) === 'and';
    const rest = this.under100(hasAnd ? k + 1 : k, start);
    if (rest && rest.value > 0) return { value: hundreds + rest.value, end: rest.end, ordinal: rest.ordinal, shape: 'two-digit' };
    return { value: hundreds, end: k, ordinal: false, shape: 'two-digit' };
  }

  /** A whole cardinal or ordinal with scales: "two million three hundred thousand and six". */
  cardinal(j: number): (Under100 & { parts: number }) | undefined {
    let total = 0;
    let k = j;
    let lastScale = Infinity;
    let parts = 0;
    let shape: Under100['shape'] = 'unit';
    for (;;) {
      let part = this.below1000(k, j);
      if (!part && this.at(k, j) === 'a') {
        const next = this.at(k + 1, j);
        if (next !== undefined && (SCALES.has(next) || ORDINAL_SCALES.has(next))) part = { value: 1, end: k + 1, ordinal: false, shape: 'unit' };
      }
      if (!part) break;
      if (part.ordinal) {
        total += part.value;
        k = part.end;
        parts++;
        return { value: total, end: k, ordinal: true, shape: parts > 1 ? 'two-digit' : part.shape, parts };
      }
      const scaleWord = this.at(part.end, j);
      const scale = scaleWord === undefined ? undefined : (SCALES.get(scaleWord) ?? ORDINAL_SCALES.get(scaleWord));
      if (scale !== undefined && part.value > 0) {
        if (scale >= lastScale) break; // "two thousand three thousand": two numbers
        total += part.value * scale;
        k = part.end + 1;
        parts++;
        shape = 'two-digit';
        if (ORDINAL_SCALES.has(scaleWord!)) return { value: total, end: k, ordinal: true, shape, parts };
        lastScale = scale;
        if (this.at(k, j) === 'and') {
          const after = this.below1000(k + 1, j);
          if (after && after.value > 0) k++;
        }
        continue;
      }
      if (parts > 0 && part.value === 0) break;
      total += part.value;
      k = part.end;
      parts++;
      if (parts > 1) shape = 'two-digit';
      else shape = part.shape;
      break;
    }
    if (parts === 0) return undefined;
    // A trailing "and" that no number followed is not part of this one.
    return { value: total, end: k, ordinal: false, shape, parts };
  }

  /** Digits read one or two at a time: "four one one one", "nineteen eighty four", "oh", "double five". */
  digitString(j: number): Found | undefined {
    let k = j;
    let digits = '';
    let groups = 0;
    for (;;) {
      const w = this.at(k, j);
      if (w === undefined) break;
      if ((w === 'double' || w === 'triple') && this.at(k + 1, j) !== undefined && UNITS.has(this.at(k + 1, j)!)) {
        digits += String(UNITS.get(this.at(k + 1, j)!)).repeat(w === 'double' ? 2 : 3);
        k += 2;
        groups++;
        continue;
      }
      if (w === 'oh' && groups > 0) {
        digits += '0';
        k++;
        groups++;
        continue;
      }
      const group = this.under100(k, j);
      if (!group || group.ordinal) break;
      // "one eight hundred …": inside a digit string, a digit then "hundred" is three digits.
      if (groups > 0 && group.shape === 'unit' && group.value > 0 && this.at(group.end, j) === 'hundred' && this.at(group.end + 1, j) !== 'and') {
        digits += `${group.value}00`;
        k = group.end + 1;
        groups++;
        continue;
      }
      digits += String(group.value).padStart(group.shape === 'unit' ? 1 : 2, '0');
      k = group.end;
      groups++;
    }
    const after = this.at(k, j);
    if (groups < 2 || digits.length < 3 || (after !== undefined && (after === 'hundred' || SCALES.has(after) || after === 'point'))) return undefined;
    return { text: digits, end: k };
  }

  /** "p m", "pm", "a m", "am" at k → "PM"/"AM" and the atom after. */
  meridiem(k: number, start: number): Found | undefined {
    const w = this.at(k, start);
    if (w === 'am' || w === 'pm') return { text: w.toUpperCase(), end: k + 1 };
    if ((w === 'a' || w === 'p') && this.at(k + 1, start) === 'm') return { text: `${w.toUpperCase()}M`, end: k + 2 };
    return undefined;
  }

  hour(j: number, start: number, max = 12): Under100 | undefined {
    const h = this.under100(j, start);
    return h && !h.ordinal && h.value >= 1 && h.value <= max ? h : undefined;
  }

  time(j: number): Found | undefined {
    return this.relativeTime(j) ?? this.clockTime(j);
  }

  /** "half past three", "a quarter to four", "ten past six", "twenty five minutes to nine". */
  private relativeTime(j: number): Found | undefined {
    let k = j;
    if (this.at(k, j) === 'a' && this.at(k + 1, j) === 'quarter') k++;
    const w = this.at(k, j);
    let minutes: number;
    let named = true;
    if (w === 'half') {
      minutes = 30;
      k++;
    } else if (w === 'quarter') {
      minutes = 15;
      k++;
    } else {
      const m = this.under100(k, j);
      if (!m || m.ordinal || m.value < 1 || m.value > 29 || k !== j) return undefined;
      minutes = m.value;
      k = m.end;
      named = false;
      const unit = this.at(k, j);
      if (unit === 'minutes' || unit === 'minute') {
        k++;
        named = true;
      }
    }
    const relation = this.at(k, j);
    if (relation === undefined || !['past', 'after', 'to', 'till', 'before'].includes(relation)) return undefined;
    const before = relation !== 'past' && relation !== 'after';
    // "two to three days" is not a time: a bare number before "to" needs "minutes" or a.m./p.m.
    const hour = this.hour(k + 1, j);
    if (!hour) return undefined;
    let end = hour.end;
    const meridiem = this.meridiem(end, j);
    if (!named && before && !meridiem) return undefined;
    if (meridiem) end = meridiem.end;
    let h = hour.value;
    let m = minutes;
    if (before) {
      h = h === 1 ? 12 : h - 1;
      m = 60 - minutes;
    }
    return { text: `${h}:${String(m).padStart(2, '0')}${meridiem ? ` ${meridiem.text}` : ''}`, end };
  }

  /** "three o'clock", "seven thirty p m", "nine oh five am", "ten am", "fourteen hundred hours". */
  private clockTime(j: number): Found | undefined {
    const military = this.hour(j, j, 23) ?? (this.at(j, j) === 'zero' ? this.zeroHour(j) : undefined);
    if (military) {
      const k = military.end;
      if (this.at(k, j) === 'hundred' && this.at(k + 1, j) === 'hours') return { text: `${String(military.value).padStart(2, '0')}:00`, end: k + 2 };
      const minutes = this.minutes(k, j);
      if (minutes && this.at(minutes.end, j) === 'hours') return { text: `${String(military.value).padStart(2, '0')}:${minutes.text}`, end: minutes.end + 1 };
    }
    const hour = this.hour(j, j);
    if (!hour) return undefined;
    let k = hour.end;
    if (this.at(k, j) === "o'clock" || this.at(k, j) === 'oclock') return { text: `${hour.value}:00`, end: k + 1 };
    const minutes = this.minutes(k, j);
    if (minutes) k = minutes.end;
    const meridiem = this.meridiem(k, j);
    if (!meridiem) return undefined;
    return { text: `${hour.value}${minutes ? `:${minutes.text}` : ''} ${meridiem.text}`, end: meridiem.end };
  }

  private zeroHour(j: number): Under100 | undefined {
    const next = this.under100(j + 1, j);
    return next && !next.ordinal && next.shape === 'unit' && next.value >= 1 ? { value: next.value, end: next.end, ordinal: false, shape: 'two-digit' } : undefined;
  }

  /** Minutes after an hour: "oh five" → 05, "thirty" → 30, "fifty nine" → 59. */
  private minutes(k: number, start: number): Found | undefined {
    if (this.at(k, start) === 'oh') {
      const unit = this.under100(k + 1, start);
      if (unit && unit.shape === 'unit' && !unit.ordinal && unit.value >= 1) return { text: `0${unit.value}`, end: unit.end };
      return undefined;
    }
    const m = this.under100(k, start);
    if (m && !m.ordinal && m.shape === 'two-digit' && m.value >= 10 && m.value <= 59) return { text: String(m.value), end: m.end };
    return undefined;
  }

  /** Digits after "point": "one four" → "14" (single digits only; "oh" counts as zero). */
  fraction(k: number, start: number): Found | undefined {
    let digits = '';
    let end = k;
    for (;;) {
      const w = this.at(end, start);
      if (w === undefined || !(UNITS.has(w) || w === 'oh')) break;
      digits += w === 'oh' ? '0' : String(UNITS.get(w));
      end++;
    }
    return digits ? { text: digits, end } : undefined;
  }

  percentAt(k: number, start: number): number | undefined {
    const w = this.at(k, start);
    if (w === 'percent') return k + 1;
    if (w === 'per' && this.at(k + 1, start) === 'cent') return k + 2;
    return undefined;
  }

  /** Any number at j: the longest of a digit string and a cardinal/ordinal, with its decimal part. */
  number(j: number): { text: string; end: number; value?: number; ordinal: boolean; small: boolean } | undefined {
    const digits = this.digitString(j);
    const card = this.cardinal(j);
    if (digits && (!card || digits.end > card.end)) return { text: digits.text, end: digits.end, ordinal: false, small: false };
    if (!card) return undefined;
    if (card.ordinal) return { text: `${card.value}${ordinalSuffix(card.value)}`, end: card.end, value: card.value, ordinal: true, small: card.parts === 1 && card.shape === 'unit' };
    if (this.at(card.end, j) === 'point') {
      const fraction = this.fraction(card.end + 1, j);
      if (fraction) return { text: `${card.value}.${fraction.text}`, end: fraction.end, ordinal: false, small: false };
    }
    return { text: String(card.value), end: card.end, value: card.value, ordinal: false, small: card.parts === 1 && card.shape === 'unit' };
  }

  /** A number and what may follow it (percent, currency); undefined when nothing here is a number to write. */
  amount(j: number): Found | undefined {
    const time = this.time(j);
    if (time) return time;
    const n = this.number(j);
    if (!n) return undefined;
    if (n.ordinal) return n.small ? undefined : n;
    const percentEnd = this.percentAt(n.end, j);
    if (percentEnd !== undefined) return { text: `${n.text}%`, end: percentEnd };
    const currency = this.currency(n, j);
    if (currency) return currency;
    return n.small ? undefined : n;
  }

  private currency(n: { text: string; end: number; value?: number }, start: number): Found | undefined {
    let k = n.end;
    let scale = '';
    const maybeScale = this.at(k, start);
    if (maybeScale !== undefined && SCALES.has(maybeScale) && maybeScale !== 'thousand') {
      scale = ` ${maybeScale}`;
      k++;
    }
    const word = this.at(k, start);
    const currency = word === undefined ? undefined : CURRENCIES.get(word);
    if (!currency) return undefined;
    if (currency.minor) return scale ? undefined : { text: `${n.text}${currency.symbol}`, end: k + 1 };
    let text = `${currency.symbol}${n.text}${scale}`;
    let end = k + 1;
    // "five dollars and twenty five cents" → $5.25
    const andAt = this.at(end, start) === 'and' ? end + 1 : end;
    const minor = !scale && n.value !== undefined ? this.cardinal(andAt) : undefined;
    const minorWord = minor ? this.at(minor.end, start) : undefined;
    if (minor && !minor.ordinal && minor.value < 100 && minorWord !== undefined && CURRENCIES.get(minorWord)?.minor) {
      if (MINOR_OF[currency.symbol] === minorWord || minorWord === 'cents' || minorWord === 'cent' || minorWord === 'pence' || minorWord === 'penny') {
        text = `${currency.symbol}${n.text}.${String(minor.value).padStart(2, '0')}`;
        end = minor.end + 1;
      }
    }
    return { text, end };
  }
}

function atomsOf(words: readonly string[]): { atoms: Atom[]; breakBefore: boolean[]; parts: ReturnType<typeof splitPunctuation>[] } {
  const atoms: Atom[] = [];
  const breakBefore: boolean[] = [];
  const parts = words.map(splitPunctuation);
  parts.forEach((p, word) => {
    const core = p.core.toLowerCase().replace(/[’]/g, "'");
    const pieces = core.includes('-') && core.split('-').every(isNumberWord) ? core.split('-') : [core];
    pieces.forEach((text, i) => {
      const previousWord = word > 0 ? parts[word - 1]! : undefined;
      breakBefore.push(i === 0 && word > 0 && (Boolean(p.lead) || Boolean(previousWord?.trail) || !p.core));
      atoms.push({ text, word });
    });
  });
  return { atoms, breakBefore, parts };
}

export const englishInverseNumbers: InverseNumberWords = {
  normalise(words) {
    const { atoms, breakBefore, parts } = atomsOf(words);
    const parser = new Parser(atoms, breakBefore);
    const out: NormalisedToken[] = [];
    let i = 0;
    while (i < atoms.length) {
      const atom = atoms[i]!;
      const startsWord = i === 0 || atoms[i - 1]!.word !== atom.word;
      const found = startsWord ? parser.amount(i) : undefined;
      // A number must cover whole words: one ending inside "twenty-three" is not taken.
      if (found && (found.end === atoms.length || atoms[found.end]!.word !== atoms[found.end - 1]!.word)) {
        const from = atom.word;
        const to = atoms[found.end - 1]!.word;
        out.push({ text: `${parts[from]!.lead}${found.text}${parts[to]!.trail}`, from, to, numeric: true });
        i = found.end;
        continue;
      }
      out.push({ text: words[atom.word]!, from: atom.word, to: atom.word, numeric: false });
      while (i < atoms.length && atoms[i]!.word === atom.word) i++;
    }
    return out;
  },
};
