/** A process and every process below it, read from /proc (Linux), for memory figures of a server and its children. */
import { readdirSync, readFileSync } from 'node:fs';

/** `rootPid` and all its descendants. */
export function processTree(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const pids: number[] = [];
  const walk = (pid: number) => {
    pids.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(rootPid);
  return pids;
}

/** Resident memory of one process in kB: RSS, and PSS (shared pages split among their users); 0 when it is gone. */
export function processMemoryKb(pid: number): { rss: number; pss: number } {
  try {
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    let pss = 0;
    try {
      pss = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // no smaps_rollup (old kernels): PSS unknown
    }
    return { rss, pss };
  } catch {
    return { rss: 0, pss: 0 };
  }
}
