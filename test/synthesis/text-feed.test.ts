/** TextFeed: pieces released at sentence ends, at the wait bound (releaseWaiting), and on close. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TextFeed } from '../../src/synthesis/text-feed.js';

async function pieces(feed: TextFeed): Promise<string[]> {
  const out: string[] = [];
  for await (const piece of feed) out.push(piece);
  return out;
}

describe('TextFeed', () => {
  it('releases each sentence once the next token shows it has ended, and the rest on close', async () => {
    const feed = new TextFeed();
    for (const token of ['Hello', ' there.', ' How', ' are', ' you?']) feed.push(token);
    assert.equal(feed.waiting, true, '" How are you?" waits: no whitespace after its mark yet');
    feed.close();
    assert.deepEqual(await pieces(feed), ['Hello there. ', 'How are you?']);
  });

  it('releaseWaiting gives out what waits up to its last word boundary, keeping a word still arriving', async () => {
    const feed = new TextFeed();
    feed.push('so the parcel wi');
    feed.releaseWaiting();
    feed.push('th your shoes ');
    assert.equal(feed.waiting, true);
    feed.releaseWaiting();
    assert.equal(feed.waiting, false, 'text ending in a space goes out whole');
    feed.push('  ');
    feed.releaseWaiting();
    feed.close();
    assert.deepEqual(await pieces(feed), ['so the parcel ', 'with your shoes ']);
  });

  it('releaseWaiting without any word boundary gives out all of it', async () => {
    const feed = new TextFeed();
    feed.push('Supercalifragilistic');
    feed.releaseWaiting();
    feed.close();
    assert.deepEqual(await pieces(feed), ['Supercalifragilistic']);
  });
});
