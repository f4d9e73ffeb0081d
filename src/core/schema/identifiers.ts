import { invalidArgument } from '../errors/LoaderError.js';

/**
 * Unquoted CQL identifiers: a letter first, then letters, digits or underscores, at most 48
 * characters (Cassandra's limit for keyspace and table names). We accept lower case only, so
 * the name a user types is the name the database stores (CQL folds unquoted names to lower
 * case, and quoting them everywhere is a trap).
 */
const IDENTIFIER = /^[a-z][a-z0-9_]{0,47}$/;

/**
 * Words CQL reserves. Column names are always quoted in statements (see {@link quoteIdentifier}),
 * so a column may be called `index`; dataset names are used bare in many places (and by users
 * in cqlsh), so they may not be reserved words.
 */
const RESERVED = new Set([
  'add',
  'aggregate',
  'all',
  'allow',
  'alter',
  'and',
  'apply',
  'asc',
  'authorize',
  'batch',
  'begin',
  'by',
  'columnfamily',
  'create',
  'delete',
  'desc',
  'describe',
  'drop',
  'entries',
  'execute',
  'from',
  'full',
  'grant',
  'if',
  'in',
  'index',
  'infinity',
  'insert',
  'into',
  'is',
  'keyspace',
  'limit',
  'materialized',
  'mbean',
  'mbeans',
  'modify',
  'nan',
  'norecursive',
  'not',
  'null',
  'of',
  'on',
  'or',
  'order',
  'primary',
  'rename',
  'replace',
  'revoke',
  'schema',
  'select',
  'set',
  'table',
  'to',
  'token',
  'truncate',
  'unlogged',
  'unset',
  'update',
  'use',
  'using',
  'view',
  'where',
  'with',
]);

/**
 * Checks a user-supplied keyspace, table or column name and returns it, or throws an
 * INVALID_ARGUMENT error that says which rule it broke.
 */
export function validateIdentifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name)) {
    throw invalidArgument(
      `invalid ${what} name ${quoted(name)}: use 1 to 48 characters, lower-case ` +
        'letters, digits and underscores, starting with a letter (e.g. "mnist" or "patient_id")',
    );
  }
  if (what === 'dataset' && RESERVED.has(name)) {
    throw invalidArgument(
      `invalid ${what} name ${JSON.stringify(name)}: it is a reserved CQL keyword; pick another`,
    );
  }
  if (what === 'dataset' && name.startsWith('system')) {
    throw invalidArgument(
      `invalid dataset name ${JSON.stringify(name)}: names starting with "system" belong to ` +
        'the database itself',
    );
  }
  return name;
}

/** A name as a message quotes it: a name far past the limit is cut (a request may be MBs). */
function quoted(name: string): string {
  return name.length > 80
    ? `${JSON.stringify(name.slice(0, 64))}... (${name.length} characters)`
    : JSON.stringify(name);
}

/**
 * Quotes a validated identifier for CQL. Validated names are lower case, so quoting does not
 * change the stored name; it lets reserved words such as `index` be column names.
 */
export function quoteIdentifier(name: string): string {
  return `"${name}"`;
}
