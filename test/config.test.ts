/** The configuration: defaults, env names (long and short), overrides, and every bad value named. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { configTable, configPagePath, tableIn } from '../scripts/config-table.js';
import { ConfigError, defaultConfig, loadConfig, settings } from '../src/config.js';

describe('loadConfig', () => {
  it('gives the documented defaults, frozen, with absolute directories', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.deepEqual(config.rateLimits.transcription, { perMinute: 120, burst: 20 });
    assert.ok(path.isAbsolute(config.dataDir) && path.isAbsolute(config.modelsDir));
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.limits));
  });

  it('reads every leaf from PARLEY_<PATH> and the common ones from their short names', () => {
    const config = loadConfig({
      PORT: '9090',
      PARLEY_RATE_LIMITS__SYNTHESIS__PER_MINUTE: '5',
      PARLEY_FFMPEG__ENABLED: 'false',
      PARLEY_ALLOWED_PRIVATE_HOSTS: '10.0.0.1, 192.168.1.0/24',
      PARLEY_DATA_DIR: 'some/dir',
    });
    assert.equal(config.port, 9090);
    assert.equal(config.rateLimits.synthesis.perMinute, 5);
    assert.equal(config.ffmpeg.enabled, false);
    assert.deepEqual(config.allowedPrivateHosts, ['10.0.0.1', '192.168.1.0/24']);
    assert.equal(config.dataDir, path.resolve('some/dir'));
  });

  it('lets explicit overrides win over the env', () => {
    assert.equal(loadConfig({ PORT: '9090' }, { port: 0 }).port, 0);
  });

  it('reports every bad value at once, each naming its variable or option', () => {
    assert.throws(
      () => loadConfig({ PORT: 'eighty', PARLEY_FFMPEG__ENABLED: 'maybe', DATABASE_URL: 'mysql://x', PARLEY_API_KEY: 'short' }, { nope: 1 }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        const text = err.problems.join('\n');
        for (const expected of [/PORT must be a number \(got "eighty"\)/, /PARLEY_FFMPEG__ENABLED must be true or false/, /databaseUrl must start with postgres/, /PARLEY_API_KEY must look like sk_/, /unknown option "nope"/]) {
          assert.match(text, expected);
        }
        return true;
      },
    );
  });

  it('refuses settings that contradict each other', () => {
    assert.throws(() => loadConfig({}, { limits: { maxTextChars: 5000, maxPreparedTextChars: 10 } }), /maxPreparedTextChars must be at least/);
    assert.throws(() => loadConfig({}, { transcription: { workers: 0 } }), /transcription.workers must be at least 1/);
  });

  it('refuses a value outside an enumeration, naming the values it takes', () => {
    assert.throws(() => loadConfig({ PARLEY_INFERENCE__LAYOUT: 'split' }), /inference\.layout must be one of "shared", "by-capability"/);
    assert.throws(() => loadConfig({ PARLEY_LOG_LEVEL: 'loud' }), /logLevel must be one of "fatal", "error"/);
  });
});

describe('the config schema', () => {
  it('gives every setting a one-line doc, its own env name and a default that passes its own bounds', () => {
    assert.ok(settings.length > 100, 'the schema lists the settings');
    for (const s of settings) assert.match(s.description, /^[^\n]{5,}$/, `${s.path.join('.')} has a one-line doc`);
    const names = settings.flatMap((s) => [s.env, ...s.aliases]);
    assert.equal(new Set(names).size, names.length, 'no env name sets two settings');
    assert.deepEqual(loadConfig({}).rateLimits, defaultConfig.rateLimits);
  });

  it("is what docs/configuration.md's table says (npm run docs:config rewrites the table)", () => {
    const onPage = tableIn(readFileSync(configPagePath, 'utf8'));
    assert.ok(onPage, 'docs/configuration.md has the table markers');
    assert.equal(onPage, configTable());
  });
});
