/**
 * Every opened resource registers a release function; they run in reverse order on shutdown
 * (graphile-worker withReleasers). A failing release is logged and the rest still run.
 */
export class Releasers {
  private readonly releasers: { name: string; release: () => unknown }[] = [];

  add(name: string, release: () => unknown): void {
    this.releasers.push({ name, release });
  }

  async releaseAll(log: (msg: string, err: unknown) => void = () => {}): Promise<void> {
    while (this.releasers.length) {
      const { name, release } = this.releasers.pop()!;
      try {
        await release();
      } catch (err) {
        log(`releasing ${name} failed`, err);
      }
    }
  }
}
