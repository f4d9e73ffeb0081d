/**
 * A layer of the server's jobs around a handler (authorization, admission, logging): it takes
 * the handler and returns one that does its job, then calls the handler, or answers the call
 * itself. Handlers stay unaware of the layers around them.
 */
export type Middleware<H> = (handler: H) => H;

/**
 * `handler` inside `layers`, the first outermost: `withLayers(h, auth, admission)` is
 * `auth(admission(h))`, so a call is authorized before it is admitted.
 */
export function withLayers<H>(handler: H, ...layers: readonly Middleware<H>[]): H {
  return layers.reduceRight<H>((inner, layer) => layer(inner), handler);
}
