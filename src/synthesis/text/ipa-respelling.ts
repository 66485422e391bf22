/**
 * IPA → plain-letter respelling, for dictionary entries written as IPA (`/təˈmɑːtoʊ/`).
 *
 * No engine Parley runs takes phonemes through its text input today: the sherpa voices
 * phonemise plain text themselves, and eSpeak's `[[...]]` phoneme input uses its own mnemonics
 * and is only honoured with a flag our eSpeak build does not expose. So IPA is turned into an
 * English-style respelling ("tuh-mah-toh") that any English voice reads close to the intended
 * sound. Limitation: the respelling follows English spelling habits, so it is approximate, and
 * worse for other languages; stress is not kept.
 */

// Longest symbols first, so that diphthongs and affricates win over their parts.
const IPA_TO_LETTERS: [string, string][] = [
  ['tʃ', 'ch'], ['t͡ʃ', 'ch'], ['dʒ', 'j'], ['d͡ʒ', 'j'], ['ts', 'ts'],
  ['aɪ', 'igh'], ['aʊ', 'ow'], ['ɔɪ', 'oy'], ['oʊ', 'oh'], ['əʊ', 'oh'], ['eɪ', 'ay'],
  ['ɪə', 'eer'], ['ɛə', 'air'], ['eə', 'air'], ['ʊə', 'oor'],
  ['iː', 'ee'], ['uː', 'oo'], ['ɑː', 'ah'], ['ɔː', 'aw'], ['ɜː', 'ur'],
  ['i', 'ee'], ['ɪ', 'i'], ['e', 'e'], ['ɛ', 'e'], ['æ', 'a'], ['a', 'a'], ['ɑ', 'ah'], ['ɒ', 'o'],
  ['ɔ', 'aw'], ['o', 'o'], ['ʊ', 'oo'], ['u', 'oo'], ['ʌ', 'u'], ['ə', 'uh'], ['ɚ', 'er'], ['ɝ', 'ur'],
  ['ɜ', 'ur'], ['ɐ', 'uh'], ['y', 'ue'], ['ø', 'eu'], ['œ', 'eu'],
  ['θ', 'th'], ['ð', 'th'], ['ʃ', 'sh'], ['ʒ', 'zh'], ['ŋ', 'ng'], ['ɲ', 'ny'], ['j', 'y'],
  ['ɹ', 'r'], ['ɾ', 'r'], ['ʁ', 'r'], ['r', 'r'], ['ɡ', 'g'], ['g', 'g'], ['x', 'kh'], ['χ', 'kh'],
  ['ç', 'h'], ['ɫ', 'l'], ['c', 'k'], ['ʔ', ''], ['β', 'v'], ['ɣ', 'g'], ['ʎ', 'ly'],
  ['p', 'p'], ['b', 'b'], ['t', 't'], ['d', 'd'], ['k', 'k'], ['f', 'f'], ['v', 'v'], ['s', 's'],
  ['z', 'z'], ['h', 'h'], ['m', 'm'], ['n', 'n'], ['l', 'l'], ['w', 'w'],
];

/** "/təˈmɑːtoʊ/" or "təˈmɑːtoʊ" → "tuh-mah-toh". Unknown symbols are dropped. */
export function ipaToRespelling(ipa: string): string {
  const source = ipa.replace(/^\/|\/$/g, '').normalize('NFD').replace(/[\u0300-\u036f]/g, '').trim();
  const words: string[] = [];
  for (const word of source.split(/\s+/)) {
    let out = '';
    let i = 0;
    while (i < word.length) {
      const ch = word[i]!;
      // Stress marks and syllable dots separate syllables.
      if ('ˈˌ.'.includes(ch)) {
        if (out && !out.endsWith('-')) out += '-';
        i++;
        continue;
      }
      const hit = IPA_TO_LETTERS.find(([symbol]) => word.startsWith(symbol, i));
      if (hit) {
        out += hit[1];
        i += hit[0].length;
      } else {
        i++;
      }
    }
    out = out.replace(/-+/g, '-').replace(/^-|-$/g, '');
    if (out) words.push(out);
  }
  return words.join(' ');
}
