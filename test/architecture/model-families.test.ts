/**
 * A model family lives in its module under src/models/families and nowhere else:
 * - no file under src/engines names a family: no string, template or regular expression in its
 *   code holds a family's id or one of its kinds (taken from the families list at run time), so
 *   the engines can only dispatch on capability;
 * - no other file of src/ names a family's kinds or id either (the catalogue's data excepted), so
 *   adding a family is its module and its line in the list;
 * - the engine config the server loads and the config verification's test-load child loads come
 *   from one call of the family's builder: a family whose builder marks its configs sees the mark
 *   in both, and nothing but enginePackOf calls a builder.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import ts from 'typescript';
import type { ModelPack } from '../../src/models/model-pack.js';
import type { AnyKindDefinition, ModelFamily } from '../../src/models/families/family.js';
import { enginePackOf, MODEL_FAMILIES, modelFamilies, packKinds, registerModelFamily, type PackKind } from '../../src/models/families/index.js';
import { testLoadJob } from '../../src/models/verify.js';
import { repoRoot } from '../helpers/models.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The text of every string, template piece and regular expression in the code (comments are not code). */
function literalsOf(source: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    // Module specifiers name files, not families.
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) return;
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) found.push(node.text);
    else if (ts.isRegularExpressionLiteral(node)) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, true));
  return found;
}

/** What a family goes by: its id and its kinds. */
const namesOf = (family: ModelFamily): string[] => [...new Set([family.id, ...Object.keys(family.kinds)])];

/** The names of `families` that a literal holds: a kind anywhere in it, an id as a whole word. */
function familyNamesIn(literal: string, families: readonly ModelFamily[]): string[] {
  const text = literal.toLowerCase();
  return families.flatMap((family) =>
    namesOf(family).filter((name) => {
      const at = text.indexOf(name.toLowerCase());
      if (at < 0) return false;
      if (name !== family.id) return true;
      const before = text[at - 1] ?? ' ';
      const after = text[at + name.length] ?? ' ';
      return !/[a-z0-9_-]/.test(before) && !/[a-z0-9_-]/.test(after);
    }),
  );
}

const literalsByFile = new Map<string, string[]>();
const literalsIn = (file: string): string[] => {
  let found = literalsByFile.get(file);
  if (!found) literalsByFile.set(file, (found = literalsOf(readFileSync(file, 'utf8'))));
  return found;
};

function offenders(files: string[], families: readonly ModelFamily[]): string[] {
  return files.flatMap((file) =>
    literalsIn(file).flatMap((literal) =>
      familyNamesIn(literal, families).map((name) => `${path.relative(repoRoot, file)} names ${name} in ${JSON.stringify(literal)}`),
    ),
  );
}

const families = MODEL_FAMILIES as readonly ModelFamily[];

/** Files with a string that reads like a kind and is something else. */
const KIND_LOOKALIKES = new Set([
  // The name of the speaker analyser that runs on a tagging model.
  'src/voice-analysis/audio-tagging.ts',
  // A schema description giving kinds as examples of what a model id may be.
  'src/http/schemas/openai-models.ts',
]);

describe('model families', () => {
  it('no file under src/engines names a model family (its id or a kind)', () => {
    const files = sourceFiles(path.join(repoRoot, 'src/engines'));
    assert.ok(files.length > 15, 'the scan found the engines');
    assert.ok(families.length > 15 && families.every((f) => Object.keys(f.kinds).length > 0), 'the families list is read at run time');
    assert.deepEqual(offenders(files, families), []);
  });

  it("a family's kinds are named only in its own module (the families list refers to its export)", () => {
    const familiesDir = path.join(repoRoot, 'src/models/families');
    const found = families.flatMap((family) => {
      const kindsOnly: ModelFamily = { ...family, id: Object.keys(family.kinds)[0]! };
      const others = sourceFiles(path.join(repoRoot, 'src')).filter((file) => {
        if (KIND_LOOKALIKES.has(path.relative(repoRoot, file))) return false;
        if (path.dirname(file) !== familiesDir) return true;
        // Its own module is the one that declares its id.
        return !literalsIn(file).includes(family.id);
      });
      return offenders(others, [kindsOnly]);
    });
    assert.deepEqual(found, []);
  });

  it('PackKind is the kinds the listed families declare (checked by the compiler), each declared once', () => {
    const declared: PackKind[] = ['tts-vits', 'asr-whisper', 'vad-silero'];
    // @ts-expect-error a kind no family declares is not a PackKind
    const undeclared: PackKind = 'tts-made-up';
    assert.ok(declared.every((k) => packKinds().includes(k)) && !packKinds().includes(undeclared));
    assert.equal(new Set(packKinds()).size, packKinds().length, 'no kind belongs to two families');
  });

  it('the checks see a family named in a string, a template and a regular expression, and not a capability or a comment', () => {
    const piper = families.find((f) => Object.hasOwn(f.kinds, 'tts-vits'))!;
    const whisper = families.find((f) => Object.hasOwn(f.kinds, 'asr-whisper'))!;
    const source = [
      "if (pack.kind === 'tts-vits') x();",
      'const t = `sherpa-${a}-asr-whisper`;',
      `const r = /${whisper.id}/i;`,
      "// a comment on the piper-vits family and tts-vits packs",
      "const c = 'offline-asr'; const d = 'zero-shot-tts';",
    ].join('\n');
    const names = literalsOf(source).flatMap((l) => familyNamesIn(l, [piper, whisper]));
    assert.deepEqual(names, ['tts-vits', 'asr-whisper', whisper.id]);
  });

  describe('engine config and test-load config', () => {
    let dir: string;
    const unregister: Array<() => void> = [];
    before(() => (dir = mkdtempSync(path.join(tmpdir(), 'parley-family-configs-'))));
    after(() => {
      for (const u of unregister) u();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A pack of `kind` whose every role names an existing empty file (builders check presence, not content). */
    const packOf = (kind: string): ModelPack => {
      const roles = ['model', 'tokens', 'encoder', 'decoder', 'joiner', 'voices', 'lexicon', 'acousticModel', 'vocoder', 'preprocessor', 'uncachedDecoder', 'cachedDecoder', 'lmFlow', 'lmMain', 'textConditioner', 'vocabJson', 'tokenScoresJson', 'bpeVocab'];
      const files: Record<string, string> = {};
      for (const role of roles) {
        files[role] = path.join(dir, `${kind}-${role}.onnx`);
        writeFileSync(files[role]!, '');
      }
      files.labels = path.join(dir, 'class_labels_indices.csv');
      writeFileSync(files.labels, '');
      return { id: `pack-${kind}`, dir, kind, files, languages: ['en'], voices: [], metadata: {} };
    };
    const build = { espeakDataDir: '/espeak-data', numThreads: 1 };

    it('verification loads, for every kind, the config and capability the server loads', () => {
      const kinds = families.flatMap((f) => Object.keys(f.kinds));
      assert.ok(kinds.length >= 20);
      for (const kind of kinds) {
        const pack = packOf(kind);
        const partner = kind === 'diarization-segmentation' ? packOf('speaker-embedding') : undefined;
        const served = enginePackOf(pack, build);
        const job = testLoadJob(pack, { espeakDataDir: build.espeakDataDir, ...(partner ? { partner } : {}) });
        assert.equal(job.capability, served.capability, kind);
        assert.deepEqual(job.config, served.config, kind);
        if (partner) assert.deepEqual(job.partner, enginePackOf(partner, build).config);
      }
    });

    it('both take their config from the family builder: a builder that marks its configs is seen by both', () => {
      for (const family of families) {
        const marked: ModelFamily = {
          ...family,
          id: `${family.id}-marked`,
          kinds: Object.fromEntries(
            Object.entries(family.kinds as Record<string, AnyKindDefinition>).map(([kind, definition]) => [
              kind,
              { ...definition, engineConfig: (pack: ModelPack, options: typeof build) => ({ ...definition.engineConfig(pack, options), builtBy: family.id }) } as AnyKindDefinition,
            ]),
          ),
        };
        const remove = registerModelFamily(marked);
        unregister.push(remove);
        try {
          assert.equal(modelFamilies()[0], marked, 'a registered family is tried first');
          for (const kind of Object.keys(family.kinds)) {
            const pack = packOf(kind);
            assert.equal((enginePackOf(pack, build).config as { builtBy?: string }).builtBy, family.id, `${kind}: served config`);
            assert.equal((testLoadJob(pack, { espeakDataDir: build.espeakDataDir }).config as { builtBy?: string }).builtBy, family.id, `${kind}: test-load config`);
          }
        } finally {
          remove();
        }
      }
      assert.ok(!modelFamilies().some((f) => f.id.endsWith('-marked')), 'the marked families are gone again');
    });

    it('nothing but enginePackOf calls a family builder', () => {
      const callers = sourceFiles(path.join(repoRoot, 'src')).flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => /\.engineConfig\(/.test(line))
          .map(() => path.relative(repoRoot, file)),
      );
      assert.deepEqual(callers, ['src/models/families/index.ts']);
    });
  });
});
