import type { Options } from '@grpc/proto-loader';

/**
 * Options for loading `proto/`: the same at run time (`loadSync`) and for the generated types
 * (`npm run gen:proto` passes the equivalent flags to proto-loader-gen-types). 64-bit integers
 * are strings so a seed never loses precision; enums are their names; absent fields get their
 * defaults so handlers never see undefined scalars.
 */
export const PROTO_OPTIONS: Options = {
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};
