/** The transcription family's error shape (decisions.md point 20): exact status and body `{error, request_id}`. */
import assert from 'node:assert/strict';

export async function expectSttError(got: Promise<{ res: Response; body: any }>, status: number, error: string | RegExp): Promise<string> {
  const { res, body } = await got;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
  if (typeof error === 'string') assert.equal(body.error, error);
  else assert.match(body.error, error);
  return body.error;
}
