import { z } from 'zod';

/** What a configuration schema says of one field: its default, range and allowed values. */
export interface FieldFacts {
  default?: unknown;
  minimum?: number;
  maximum?: number;
  enum?: readonly unknown[];
}

/** Looks up a dotted field path (`db.port`) of a schema. */
export type SchemaFacts = (field: string) => FieldFacts | undefined;

interface JsonSchemaNode extends FieldFacts {
  properties?: Record<string, JsonSchemaNode>;
  anyOf?: JsonSchemaNode[];
}

/**
 * The facts of every field of a zod object schema, read from its JSON Schema (as input: the
 * defaults apply to what the user gives), so help, docs and checks never restate them.
 */
export function schemaFacts(schema: z.ZodType): SchemaFacts {
  const root = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  return (field) => {
    let node: JsonSchemaNode | undefined = root;
    for (const key of field.split('.')) {
      // An optional object (`tls`) is `anyOf` [object, null] in some zod versions.
      const object: JsonSchemaNode | undefined = node?.properties
        ? node
        : node?.anyOf?.find((n) => n.properties);
      node = object?.properties?.[key];
      if (node === undefined) return undefined;
    }
    return node;
  };
}
