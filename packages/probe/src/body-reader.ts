import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ProbeFailure } from './probe-failure.ts';

/** Reads a whole body, refusing (and stopping the transfer) once it passes `cap` bytes. */
export async function readCapped(body: AsyncIterable<Buffer>, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    // Throwing out of for-await destroys the stream: nothing past the cap is read.
    if (size > cap) throw new ProbeFailure('body_too_large', `response body exceeds ${cap} bytes`);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/**
 * Yields the events of a text/event-stream body as they arrive, with the same byte cap over the
 * whole stream. Stopping the iteration early closes the stream.
 */
export async function* sseEvents(
  body: AsyncIterable<Buffer>,
  cap: number,
): AsyncGenerator<EventSourceMessage> {
  const ready: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event) });
  const decoder = new TextDecoder();
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > cap) throw new ProbeFailure('body_too_large', `event stream exceeds ${cap} bytes`);
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (ready.length > 0) yield ready.shift()!;
  }
}
