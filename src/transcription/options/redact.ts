/**
 * Finding what `redact_pci` and `redact_pii` remove, on the normalised words (spoken numbers
 * already digits, so "four two four two…" counts as a card number). Rules:
 * PCI
 * - CREDITCARDNUMBER: 13 to 19 digits, in one word or consecutive digit words, passing the Luhn check.
 * - CREDITCARDCVV: 3 or 4 digits within a few words after "cvv", "cvc", "csc", "security code",
 *   "verification code", "security number".
 * - CREDITCARDEXPIRY: after "expiry", "expiration", "expires", "exp", "valid thru/through/until":
 *   a month and year as digits (1228, 12/28, 12 28) or a month name with a year or number.
 * - ROUTINGNUMBER: 9 digits (ABA) or 6 (sort code) after "routing", "aba", "sort code", "transit".
 * - BANKACCOUNTNUMBER: 6 to 17 digits after "account" or "iban".
 * PII
 * - EMAIL: a written address, or a spoken one ("john dot smith at example dot com").
 * - NATIONALID: ddd-dd-dddd, a UK National Insurance number, or 9 digits after "social
 *   security", "ssn", "national insurance", "national id", "tax id", "passport".
 * - PHONENUMBER: 10 to 15 digits anywhere, or 7 to 9 after "phone", "call", "mobile", "cell",
 *   "number", "telephone", "extension", "reach".
 * - DATEOFBIRTH: a date (month name with day and/or year, digits such as 12/05/1984, a year)
 *   within a few words after "born", "birth", "birthday", "dob".
 * - ADDRESS: a house number, up to four words and a street word (street, avenue, road…), with an
 *   apartment or suite number after it.
 * - NUMBER (live partials only): any other run of 4 or more digits, as it may be the start of one
 *   of the above that the next partial completes.
 * Names need a named-entity pack; none is available, so PII redaction leaves names and says so.
 * Each detector sees only words no earlier one took; spans are over word indices, inclusive.
 */

export type EntityType =
  | 'CREDITCARDNUMBER'
  | 'CREDITCARDCVV'
  | 'CREDITCARDEXPIRY'
  | 'ROUTINGNUMBER'
  | 'BANKACCOUNTNUMBER'
  | 'EMAIL'
  | 'NATIONALID'
  | 'PHONENUMBER'
  | 'DATEOFBIRTH'
  | 'ADDRESS'
  /** A digit string of a live partial that may still grow into one of the above. */
  | 'NUMBER';

export interface EntitySpan {
  type: EntityType;
  /** First and last word (inclusive). */
  from: number;
  to: number;
  /** What was said, normalised: what makes two spans the same entity (kept only while redacting). */
  value: string;
}

/** Words a cue may be away from what it introduces. */
const CUE_REACH = 6;
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_SHORT = ['jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec'];
const STREET_WORDS = new Set([
  'street', 'st', 'avenue', 'ave', 'road', 'rd', 'boulevard', 'blvd', 'lane', 'ln', 'drive', 'dr', 'court', 'ct', 'way', 'place', 'pl',
  'terrace', 'close', 'crescent', 'square', 'highway', 'parkway', 'circle', 'trail', 'row', 'gardens',
]);
/** Ordinals the normaliser leaves as words ("march third"). */
const SMALL_ORDINALS = new Set(['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth']);
const UNIT_WORDS = new Set(['apartment', 'apt', 'suite', 'unit', 'flat', 'floor']);
const TLDS = new Set(['com', 'org', 'net', 'edu', 'gov', 'io', 'co', 'uk', 'us', 'de', 'fr', 'in', 'ai', 'info', 'biz', 'me', 'ca', 'au']);

/** A word reduced for matching: lower case, outer punctuation off. */
function core(word: string): string {
  return word.toLowerCase().replace(/^[("'[]+|[.,!?;:)"'\]]+$/g, '');
}

/** The digits of a word made of digits and separators ("4242", "12/28", "555-1234", "+44"), else undefined. */
function digitsOf(word: string): string | undefined {
  const c = core(word);
  return /^\+?[\d\-/().]*\d[\d\-/().]*$/.test(c) ? c.replace(/\D/g, '') : undefined;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

function abaValid(digits: string): boolean {
  if (digits.length !== 9) return false;
  const d = [...digits].map(Number);
  return (3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!)) % 10 === 0;
}

class Finder {
  private readonly words: string[];
  private readonly taken: boolean[];
  readonly spans: EntitySpan[] = [];

  constructor(words: readonly string[]) {
    this.words = words.map(core);
    this.taken = words.map(() => false);
  }

  private free(from: number, to: number): boolean {
    for (let i = from; i <= to; i++) if (this.taken[i]) return false;
    return true;
  }

  take(type: EntityType, from: number, to: number, value: string): void {
    for (let i = from; i <= to; i++) this.taken[i] = true;
    this.spans.push({ type, from, to, value });
  }

  /** Runs of consecutive free digit words: [from, to, digits]. */
  digitRuns(): Array<{ from: number; to: number; digits: string }> {
    const runs: Array<{ from: number; to: number; digits: string }> = [];
    let current: { from: number; to: number; digits: string } | undefined;
    this.words.forEach((_, i) => {
      const d = this.taken[i] ? undefined : digitsOf(this.words[i]!);
      if (d === undefined) {
        current = undefined;
        return;
      }
      if (current) {
        current.to = i;
        current.digits += d;
      } else {
        current = { from: i, to: i, digits: d };
        runs.push(current);
      }
    });
    return runs;
  }

  /** Indices just after each occurrence of a cue (a word or a phrase of words). */
  cueEnds(cues: string[]): number[] {
    const ends: number[] = [];
    for (const cue of cues) {
      const parts = cue.split(' ');
      for (let i = 0; i + parts.length <= this.words.length; i++) {
        if (parts.every((p, k) => this.words[i + k] === p)) ends.push(i + parts.length);
      }
    }
    return ends.sort((a, b) => a - b);
  }

  /** The first free digit run starting within reach after a cue, whose digits pass `accept`. */
  afterCue(cues: string[], accept: (digits: string) => boolean, type: EntityType): void {
    for (const at of this.cueEnds(cues)) {
      const run = this.digitRuns().find((r) => r.from >= at && r.from < at + CUE_REACH);
      if (run && accept(run.digits)) this.take(type, run.from, run.to, run.digits);
    }
  }

  cardNumbers(): void {
    for (const run of this.digitRuns()) {
      // The longest stretch of whole words in the run that is a valid card number.
      let best: { from: number; to: number; digits: string } | undefined;
      for (let a = run.from; a <= run.to; a++) {
        let digits = '';
        for (let b = a; b <= run.to; b++) {
          digits += digitsOf(this.words[b]!)!;
          if (digits.length > 19) {
            // One word holding more (a card number said with its expiry): its valid prefix counts.
            if (a === b && [19, 18, 17, 16, 15, 14, 13].some((n) => luhnValid(digits.slice(0, n)))) best ??= { from: a, to: b, digits };
            break;
          }
          if (digits.length >= 13 && luhnValid(digits) && (!best || digits.length > best.digits.length)) best = { from: a, to: b, digits };
        }
      }
      if (best) this.take('CREDITCARDNUMBER', best.from, best.to, best.digits);
    }
  }

  expiry(): void {
    for (const at of this.cueEnds(['expiry', 'expiration', 'expires', 'expire', 'exp', 'valid thru', 'valid through', 'valid until'])) {
      for (let i = at; i < Math.min(this.words.length, at + CUE_REACH); i++) {
        if (this.taken[i]) continue;
        const w = this.words[i]!;
        const month = monthOf(w);
        if (month !== undefined) {
          const next = i + 1 < this.words.length && !this.taken[i + 1] ? digitsOf(this.words[i + 1]!) : undefined;
          const to = next !== undefined && next.length <= 4 ? i + 1 : i;
          this.take('CREDITCARDEXPIRY', i, to, `${month}/${next ?? ''}`);
          break;
        }
        const d = digitsOf(w);
        if (d === undefined) continue;
        const next = i + 1 < this.words.length && !this.taken[i + 1] ? digitsOf(this.words[i + 1]!) : undefined;
        if (d.length <= 2 && next !== undefined && next.length <= 4 && isMonth(d)) {
          this.take('CREDITCARDEXPIRY', i, i + 1, `${d}/${next}`);
          break;
        }
        if ((d.length === 3 || d.length === 4 || d.length === 6) && isMonth(d.length === 3 ? d.slice(0, 1) : d.slice(0, 2))) {
          this.take('CREDITCARDEXPIRY', i, i, d);
          break;
        }
      }
    }
  }

  emails(): void {
    this.words.forEach((w, i) => {
      if (!this.taken[i] && /^[\w.+-]+@[\w-]+(\.[\w-]+)+$/.test(w)) this.take('EMAIL', i, i, w);
    });
    // Spoken: local ("dot" part)* "at" domain ("dot" part)+, the last part a known top-level domain.
    for (let i = 1; i < this.words.length - 3; i++) {
      if (this.words[i] !== 'at' || !this.isPart(i - 1)) continue;
      let end = i + 1;
      if (!this.isPart(end)) continue;
      while (end + 2 < this.words.length && ['dot', '.'].includes(this.words[end + 1]!) && this.isPart(end + 2)) end += 2;
      if (end === i + 1 || !TLDS.has(this.words[end]!)) continue;
      let start = i - 1;
      while (start >= 2 && ['dot', 'underscore', 'dash', 'hyphen'].includes(this.words[start - 1]!) && this.isPart(start - 2)) start -= 2;
      if (this.free(start, end)) this.take('EMAIL', start, end, this.words.slice(start, end + 1).join(' '));
    }
  }

  private isPart(i: number): boolean {
    return i >= 0 && i < this.words.length && !this.taken[i] && /^[\p{L}\p{N}]+$/u.test(this.words[i]!);
  }

  nationalIds(): void {
    this.words.forEach((w, i) => {
      if (this.taken[i]) return;
      if (/^\d{3}-\d{2}-\d{4}$/.test(w) || /^[a-z]{2}\d{6}[a-d]$/.test(w)) this.take('NATIONALID', i, i, w.replace(/\W/g, ''));
    });
    this.afterCue(['social security', 'ssn', 'social', 'national insurance', 'national id', 'national identity', 'tax id', 'passport', 'id number'], (d) => d.length >= 6 && d.length <= 12, 'NATIONALID');
  }

  phones(): void {
    this.afterCue(['phone', 'call', 'mobile', 'cell', 'number', 'telephone', 'extension', 'reach', 'text'], (d) => d.length >= 7 && d.length <= 15, 'PHONENUMBER');
    for (const run of this.digitRuns()) if (run.digits.length >= 10 && run.digits.length <= 15) this.take('PHONENUMBER', run.from, run.to, run.digits);
  }

  datesOfBirth(): void {
    for (const at of this.cueEnds(['born', 'birth', 'birthday', 'dob', 'd o b', 'd.o.b'])) {
      let from = -1;
      let to = -1;
      for (let i = at; i < Math.min(this.words.length, at + CUE_REACH); i++) {
        if (this.taken[i]) break;
        const w = this.words[i]!;
        const dateWord = monthOf(w) !== undefined || /^\d{1,2}(st|nd|rd|th)$/.test(w) || SMALL_ORDINALS.has(w) || /^\d{1,4}$/.test(w) || /^\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4}$/.test(w);
        if (dateWord) {
          if (from === -1) from = i;
          to = i;
        } else if (from !== -1 && !(w === 'of' || w === 'the')) break;
      }
      if (from !== -1) this.take('DATEOFBIRTH', from, to, this.words.slice(from, to + 1).join(' '));
    }
  }

  addresses(): void {
    for (let i = 0; i < this.words.length; i++) {
      if (this.taken[i] || !/^\d{1,6}[a-z]?$/.test(this.words[i]!)) continue;
      for (let j = i + 2; j <= Math.min(this.words.length - 1, i + 5); j++) {
        if (this.taken[j]) break;
        if (!STREET_WORDS.has(this.words[j]!)) continue;
        let to = j;
        if (to + 2 < this.words.length && UNIT_WORDS.has(this.words[to + 1]!) && /^\d+[a-z]?$/.test(this.words[to + 2]!)) to += 2;
        if (this.free(i, to)) this.take('ADDRESS', i, to, this.words.slice(i, to + 1).join(' '));
        break;
      }
    }
  }
}

function monthOf(word: string): number | undefined {
  const full = MONTHS.indexOf(word);
  if (full !== -1) return full + 1;
  const short = MONTH_SHORT.indexOf(word);
  if (short === -1) return undefined;
  return MONTHS.findIndex((m) => m.startsWith(word.slice(0, 3))) + 1;
}

function isMonth(digits: string): boolean {
  const m = Number(digits);
  return m >= 1 && m <= 12;
}

export interface RedactionRequest {
  pci: boolean;
  pii: boolean;
  /** Also take any other run of at least this many digits (live partials, where a number may be unfinished). */
  digitRunsFrom?: number;
}

/** The spans to redact in normalised words, ordered by position. */
export function findEntities(words: readonly string[], request: RedactionRequest): EntitySpan[] {
  const finder = new Finder(words);
  if (request.pci) {
    finder.cardNumbers();
    finder.afterCue(['cvv', 'cvv2', 'cvc', 'csc', 'security code', 'verification code', 'card verification', 'security number', 'cvv code'], (d) => d.length === 3 || d.length === 4, 'CREDITCARDCVV');
    finder.expiry();
    finder.afterCue(['routing', 'aba', 'sort code', 'transit'], (d) => (d.length === 9 && abaValid(d)) || d.length === 6 || d.length === 9, 'ROUTINGNUMBER');
    finder.afterCue(['account', 'acct', 'iban'], (d) => d.length >= 6 && d.length <= 17, 'BANKACCOUNTNUMBER');
  }
  if (request.pii) {
    finder.emails();
    finder.nationalIds();
    finder.datesOfBirth();
    finder.phones();
    finder.addresses();
  }
  const from = request.digitRunsFrom;
  if (from !== undefined) for (const run of finder.digitRuns()) if (run.digits.length >= from) finder.take('NUMBER', run.from, run.to, run.digits);
  return finder.spans.sort((a, b) => a.from - b.from);
}
