/**
 * The opt-in reading of digit-flanked math operators as words (`6 x 7` → "6 times 7"). Off by
 * default: in ordinary text `18x24`, `24x7` and `5-3` are dimensions, idioms and ranges. The
 * unambiguous glyphs fire glued or spaced; `-` `–` `−` and `/` only with spaces on both sides, so
 * ranges, ISO dates and fractions stay as they are. An operator never bridges a line break.
 */

type Operator = 'times' | 'divided' | 'plus' | 'minus' | 'equals' | 'power';

/** The spoken operators of the languages that have their own; every other language reads English ones. */
const OPERATOR_WORDS: Readonly<Record<string, Readonly<Record<Operator, string>>>> = {
  en: { times: 'times', divided: 'divided by', plus: 'plus', minus: 'minus', equals: 'equals', power: 'to the power of' },
  hi: { times: 'गुणा', divided: 'बटा', plus: 'प्लस', minus: 'माइनस', equals: 'बराबर', power: 'की घात' },
  mr: { times: 'गुणिले', divided: 'भागिले', plus: 'अधिक', minus: 'वजा', equals: 'बरोबर', power: 'ची घात' },
};

const OPERATOR_OF: Readonly<Record<string, Operator>> = {
  '×': 'times', x: 'times', X: 'times', '*': 'times', '÷': 'divided', '/': 'divided', '+': 'plus',
  '-': 'minus', '–': 'minus', '−': 'minus', '=': 'equals', '^': 'power', '**': 'power',
};

/** A digit before the operator; after it a digit, possibly behind a currency sign (`2 x ₹99`). */
const LEFT = '(?<=\\p{Nd})';
const RIGHT = '(?=[$€£₹¥]?\\p{Nd})';
const SPACE = '[^\\S\\n]';
const OPERATORS = new RegExp(`${LEFT}(?:${SPACE}*(\\*\\*|[×÷*^=+xX])${SPACE}*|${SPACE}+([-–−/])${SPACE}+)${RIGHT}`, 'gu');

/** Whether `language` has operator words of its own (else English ones are read). */
export function hasOperatorWords(language: string): boolean {
  return Object.hasOwn(OPERATOR_WORDS, language);
}

/** `text` with each digit-flanked operator replaced by its word in `language` (English where it has none). */
export function readMathOperators(text: string, language: string): string {
  const words = OPERATOR_WORDS[language] ?? OPERATOR_WORDS.en!;
  return text.replace(OPERATORS, (_match, glyph: string | undefined, spacedGlyph: string | undefined) => ` ${words[OPERATOR_OF[glyph ?? spacedGlyph!]!]} `);
}
