import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { detectLanguage } from '../../../src/synthesis/text/detect-language.js';

const TTS_V2 = ['en', 'hi', 'ta', 'kn', 'mr', 'bn', 'gu', 'ar', 'he', 'fr', 'de', 'pl', 'ru', 'it', 'nl', 'es', 'sv', 'ml', 'te'];

const SAMPLES: [string, string][] = [
  ['en', 'The weather is lovely today, so we are going to walk along the river.'],
  ['fr', "Le temps est magnifique aujourd'hui, alors nous allons nous promener le long de la rivière."],
  ['de', 'Das Wetter ist heute herrlich, deshalb gehen wir am Fluss spazieren.'],
  ['es', 'Hoy hace un tiempo precioso, así que vamos a pasear por la orilla del río.'],
  ['it', 'Oggi il tempo è bellissimo, quindi andiamo a passeggiare lungo il fiume.'],
  ['nl', 'Het weer is vandaag prachtig, dus we gaan langs de rivier wandelen.'],
  ['pl', 'Dzisiaj jest piękna pogoda, więc pójdziemy na spacer wzdłuż rzeki.'],
  ['sv', 'Vädret är underbart i dag, så vi ska promenera längs floden.'],
  ['hi', 'आज मौसम बहुत सुहावना है, इसलिए हम नदी के किनारे टहलने जाएंगे।'],
  ['ru', 'Сегодня прекрасная погода, поэтому мы пойдём гулять вдоль реки.'],
  ['ar', 'الطقس جميل اليوم، لذلك سنذهب للتنزه على طول النهر.'],
  ['he', 'מזג האוויר נפלא היום, אז נלך לטייל לאורך הנהר.'],
  ['ta', 'இன்று வானிலை மிகவும் நன்றாக உள்ளது.'],
  ['kn', 'ಇಂದು ಹವಾಮಾನ ತುಂಬಾ ಚೆನ್ನಾಗಿದೆ.'],
  ['bn', 'আজ আবহাওয়া খুব সুন্দর।'],
  ['gu', 'આજે હવામાન ખૂબ સરસ છે.'],
  ['ml', 'ഇന്ന് കാലാവസ്ഥ വളരെ നല്ലതാണ്.'],
  ['te', 'ఈ రోజు వాతావరణం చాలా బాగుంది.'],
];

describe('detectLanguage among the tts-v2 languages', () => {
  for (const [expected, text] of SAMPLES) {
    test(`${expected}: ${text.slice(0, 30)}…`, () => assert.equal(detectLanguage(text, TTS_V2), expected));
  }
});

describe('detectLanguage restrictions and fallbacks', () => {
  test('only ever answers an allowed language', () => {
    for (const [, text] of SAMPLES) assert.ok(['en', 'hi'].includes(detectLanguage(text, ['en', 'hi'])));
  });
  test('Devanagari is Hindi, or Marathi when Hindi is not allowed', () => {
    const text = 'माझे नाव राम आहे आणि मी पुण्यात राहतो.';
    assert.equal(detectLanguage(text, ['en', 'hi', 'mr']), 'hi');
    assert.equal(detectLanguage(text, ['en', 'mr']), 'mr');
  });
  test('a single allowed language is returned as is', () => {
    assert.equal(detectLanguage('Bonjour tout le monde, comment allez-vous ?', ['es']), 'es');
  });
  test('short or letterless text falls back to English', () => {
    for (const text of ['ok', 'Hallo', '12345', '!!!', '']) assert.equal(detectLanguage(text, TTS_V2), 'en');
  });
  test('without English allowed the fallback is the first allowed language', () => {
    assert.equal(detectLanguage('ok', ['es', 'fr']), 'es');
  });
  test('Latin text picks the best allowed Latin language', () => {
    assert.equal(detectLanguage(SAMPLES[2]![1], ['en', 'de']), 'de');
    assert.equal(detectLanguage(SAMPLES[3]![1], ['en', 'hi', 'ta', 'es']), 'es');
  });
});
