import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NORMALIZED_LANGUAGES, normalizeText } from '../../../src/synthesis/text/normalize.js';

const CASES: Record<string, [string, string][]> = {
  en: [
    ['I have 21 apples', 'I have twenty-one apples'],
    ['$3.50', 'three dollars and fifty cents'],
    ['It costs $1.', 'It costs one dollar.'],
    ['Only $0.99!', 'Only ninety-nine cents!'],
    ['$1,000,000', 'one million dollars'],
    ['$2.5 million', 'two point five million dollars'],
    ['€20, £7 and ₹100', 'twenty euros, seven pounds and one hundred rupees'],
    ['5 USD', 'five dollars'],
    ['10:30', 'ten thirty'],
    ['10:00', "ten o'clock"],
    ['Meet me at 9:05 am', 'Meet me at nine oh five ay em'],
    ['It ends at 11 p.m. Then we go.', 'It ends at eleven pee em. Then we go.'],
    ['2024-03-15', 'March fifteenth, twenty twenty-four'],
    ['03/15/2024', 'March fifteenth, twenty twenty-four'],
    ['15/03/2024', 'March fifteenth, twenty twenty-four'],
    ['March 5, 2024', 'March fifth, twenty twenty-four'],
    ['on 5 March', 'on the fifth of March'],
    ['The 5th of May', 'The fifth of May'],
    ['You may 2', 'You may two'],
    ['In 1999 it rained.', 'In nineteen ninety-nine it rained.'],
    ['in 2005', 'in two thousand five'],
    ['1,234 people', 'one thousand two hundred thirty-four people'],
    ['1,00,000 rupees', 'one hundred thousand rupees'],
    ['-5 degrees', 'minus five degrees'],
    ['3.14', 'three point one four'],
    ['50% off', 'fifty percent off'],
    ['The 21st century, 2nd place, 3rd time, 100th day', 'The twenty-first century, second place, third time, one hundredth day'],
    ['Dr. Smith and Mr. Jones', 'Doctor Smith and Mister Jones'],
    ['Mrs. Brown vs. Ms. Green', 'Missus Brown versus Miz Green'],
    ['He lives in St. Louis on Main St. Then he left.', 'He lives in Saint Louis on Main Street. Then he left.'],
    ['apples, pears, etc. Then plums', 'apples, pears, et cetera. Then plums'],
    ['fruit, e.g. apples', 'fruit, for example apples'],
    ['No. 5', 'number five'],
    ['mp3 and 007', 'mp three and zero zero seven'],
    ['salt & pepper', 'salt and pepper'],
    ['१२३', 'one hundred twenty-three'],
    ['  lots   of\n space ', 'lots of space'],
  ],
  de: [
    ['21', 'einundzwanzig'],
    ['Im Jahr 1999', 'Im Jahr neunzehnhundertneunundneunzig'],
    ['1.000.000 Menschen', 'eine Million Menschen'],
    ['3,5 Liter', 'drei Komma fünf Liter'],
    ['Es kostet 3,50 €.', 'Es kostet drei Euro fünfzig.'],
    ['1 €', 'ein Euro'],
    ['20 € und 5 USD', 'zwanzig Euro und fünf Dollar'],
    ['50 %', 'fünfzig Prozent'],
    ['10:30', 'zehn Uhr dreißig'],
    ['1:00', 'ein Uhr'],
    ['Am 15. März 2024', 'Am fünfzehnten März zweitausendvierundzwanzig'],
    ['15.03.2024', 'fünfzehnter März zweitausendvierundzwanzig'],
    ['am 15.03.2024', 'am fünfzehnten März zweitausendvierundzwanzig'],
    ['Der 2. Platz', 'Der zweite Platz'],
    ['zum 3. Mal', 'zum dritten Mal'],
    ['Ich bin 30. Du bist 20.', 'Ich bin dreißig. Du bist zwanzig.'],
    ['z.B. Äpfel usw.', 'zum Beispiel Äpfel und so weiter.'],
    ['Dr. Müller, Nr. 5', 'Doktor Müller, Nummer fünf'],
    ['-3 Grad', 'minus drei Grad'],
  ],
  fr: [
    ['71', 'soixante et onze'],
    ['80', 'quatre-vingts'],
    ['91', 'quatre-vingt-onze'],
    ['21 ans', 'vingt et un ans'],
    ['20 000 personnes', 'vingt mille personnes'],
    ['3,14', 'trois virgule quatorze'],
    ['3,50 €', 'trois euros cinquante'],
    ['1 €', 'un euro'],
    ['1 000 000 $', 'un million de dollars'],
    ['50 %', 'cinquante pour cent'],
    ['Le 1er mars', 'Le premier mars'],
    ['la 1re fois, la 2e fois', 'la première fois, la deuxième fois'],
    ['le 3ème jour', 'le troisième jour'],
    ['10h30', 'dix heures trente'],
    ['10:30', 'dix heures trente'],
    ['1:00', 'une heure'],
    ['15/03/2024', 'quinze mars deux mille vingt-quatre'],
    ['01/03/2024', 'premier mars deux mille vingt-quatre'],
    ['en 1999', 'en mille neuf cent quatre-vingt-dix-neuf'],
    ['M. Dupont et Mme Martin', 'Monsieur Dupont et Madame Martin'],
  ],
  es: [
    ['21', 'veintiuno'],
    ['500', 'quinientos'],
    ['1000', 'mil'],
    ['100', 'cien'],
    ['1.000.000 de personas', 'un millón de personas'],
    ['1 €', 'un euro'],
    ['3,50 €', 'tres euros con cincuenta céntimos'],
    ['$3.50', 'tres dólares con cincuenta centavos'],
    ['21 €', 'veintiún euros'],
    ['£1', 'una libra'],
    ['50 %', 'cincuenta por ciento'],
    ['10:30', 'diez y treinta'],
    ['1:00', 'una en punto'],
    ['15/03/2024', 'quince de marzo de dos mil veinticuatro'],
    ['1 de marzo', 'primero de marzo'],
    ['el 1.º y la 2.ª', 'el primero y la segunda'],
    ['3,14', 'tres coma catorce'],
    ['Sr. García y Dra. López', 'señor García y doctora López'],
  ],
  hi: [
    ['21', 'इक्कीस'],
    ['100', 'एक सौ'],
    ['१२३', 'एक सौ तेईस'],
    ['123', 'एक सौ तेईस'],
    ['मेरे पास 21 सेब हैं', 'मेरे पास इक्कीस सेब हैं'],
    ['1,00,000', 'एक लाख'],
    ['₹100', 'एक सौ रुपये'],
    ['₹1', 'एक रुपया'],
    ['₹3.50', 'तीन रुपये पचास पैसे'],
    ['Rs. 500', 'पाँच सौ रुपये'],
    ['50%', 'पचास प्रतिशत'],
    ['10:30', 'दस बजकर तीस मिनट'],
    ['10:00', 'दस बजे'],
    ['15/03/2024', 'पंद्रह मार्च दो हज़ार चौबीस'],
    ['सन 1999 में', 'सन उन्नीस सौ निन्यानबे में'],
    ['3.5', 'तीन दशमलव पाँच'],
    ['डॉ. शर्मा', 'डॉक्टर शर्मा'],
  ],
};

for (const [language, cases] of Object.entries(CASES)) {
  describe(`normalizeText ${language}`, () => {
    for (const [input, expected] of cases) {
      test(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
        assert.equal(normalizeText(input, language), expected.normalize('NFC'));
      });
    }
  });
}

describe('normalizeText: languages without a normaliser', () => {
  test('the covered languages are en, hi, es, fr, de', () => {
    assert.deepEqual([...NORMALIZED_LANGUAGES].sort(), ['de', 'en', 'es', 'fr', 'hi']);
  });
  for (const language of ['ru', 'ta', 'ar', 'pl']) {
    test(`${language}: only whitespace changes`, () => {
      assert.equal(normalizeText('  В 2024   году $5\n и 10:30 ', language), 'В 2024 году $5 и 10:30');
    });
  }
  test('a region subtag uses the base language', () => {
    assert.equal(normalizeText('21', 'en-US'), 'twenty-one');
  });
});
