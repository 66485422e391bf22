/**
 * A test's `skip` option for something the machine lacks (a model, the corpus, PostgreSQL, a
 * program): false when nothing is missing, else the one line naming it. With
 * PARLEY_TEST_REQUIRE_ALL=1 (set by .ci/run) a missing thing throws instead and fails the test
 * file, so CI cannot pass by skipping.
 */
export const requireAll = process.env.PARLEY_TEST_REQUIRE_ALL === '1';

export function skipWhenMissing(missing: string | false | undefined | null): string | false {
  if (!missing) return false;
  if (requireAll) throw new Error(`PARLEY_TEST_REQUIRE_ALL=1 and this test ${missing}`);
  return missing;
}
