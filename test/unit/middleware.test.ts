import { describe, expect, it } from 'vitest';
import { type Middleware, withLayers } from '../../src/server/middleware.js';

type Handler = (call: string[]) => void;

/** A layer that records its name, then calls the handler unless it refuses `refused`. */
const layer =
  (name: string, refused?: string): Middleware<Handler> =>
  (handler) =>
  (call) => {
    call.push(name);
    if (name !== refused) handler(call);
  };

describe('withLayers', () => {
  it('runs the layers outermost first, then the handler', () => {
    const call: string[] = [];
    withLayers<Handler>((c) => c.push('handler'), layer('auth'), layer('admission'))(call);
    expect(call).toEqual(['auth', 'admission', 'handler']);
  });

  it('lets a layer answer the call without reaching the layers and handler inside it', () => {
    const call: string[] = [];
    withLayers<Handler>((c) => c.push('handler'), layer('auth', 'auth'), layer('admission'))(call);
    expect(call).toEqual(['auth']);
  });

  it('is the handler itself without layers', () => {
    const handler: Handler = () => undefined;
    expect(withLayers(handler)).toBe(handler);
  });
});
