// MCP tools that describe databases: list_databases, get_database_schema, search_schema, get_data_protection.
import * as v from 'valibot';
import { aiDatabases, aiTarget, readSchema, type ToolDef } from './context.ts';
import { describeDataProtection } from './protection.ts';

const Id = v.pipe(v.string(), v.minLength(1), v.maxLength(64));
const DatabaseId = v.pipe(Id, v.description('A database id from list_databases (db_…).'));
const OnlyDatabase = v.pipe(Id, v.description('Only this database (db_…).'));

export const listDatabasesTool: ToolDef = {
  name: 'list_databases',
  title: 'List databases',
  description:
    'Databases you can query through Countersign: only those you have access to and that allow AI use. ' +
    'Each lists the credentials the AI may run as, whether they need peer review, and the AI row cap.',
  input: v.object({}),
  readOnly: true,
  async run(ctx) {
    const list = await aiDatabases(ctx);
    return {
      databases: list.map(({ db, credentials }) => ({
        id: db.id,
        name: db.name,
        adapter: db.adapter,
        database: db.database,
        group: db.group_name,
        ai_max_rows: db.ai_max_rows,
        credentials: credentials.map((c) => ({
          id: c.id,
          username: c.username,
          default: c.default_credential,
          reviews_required: c.reviews_required,
        })),
      })),
    };
  },
};

const SchemaInput = v.object({
  database_id: DatabaseId,
  credential_id: v.optional(
    v.pipe(Id, v.description('Credential to read as (crd_…); defaults to an AI-allowed one.')),
  ),
});

export const getDatabaseSchemaTool: ToolDef<typeof SchemaInput> = {
  name: 'get_database_schema',
  title: 'Get database schema',
  description:
    'Tables and views of one database with their columns (name, type, nullable), as the AI credential sees them.',
  input: SchemaInput,
  readOnly: true,
  async run(ctx, input) {
    const { db, cred } = await aiTarget(ctx, input.database_id, input.credential_id);
    const tables = await readSchema(ctx, db, cred);
    return { database_id: db.id, adapter: db.adapter, tables };
  },
};

const SearchInput = v.object({
  query: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(200),
    v.description('Text to look for in table and column names.'),
  ),
  database_id: v.optional(OnlyDatabase),
});

export const searchSchemaTool: ToolDef<typeof SearchInput> = {
  name: 'search_schema',
  title: 'Search schema',
  description:
    'Finds tables, views and columns whose name contains the text (case-insensitive), across your AI-enabled ' +
    'databases or one of them. At most 200 matches.',
  input: SearchInput,
  readOnly: true,
  async run(ctx, input) {
    const needle = input.query.toLowerCase();
    const targets = input.database_id
      ? [await aiTarget(ctx, input.database_id)]
      : (await aiDatabases(ctx)).flatMap(({ db, credentials }) => {
          const cred = credentials.find((c) => c.default_credential) ?? credentials[0];
          return cred ? [{ db, cred }] : [];
        });
    const matches: Array<Record<string, string>> = [];
    for (const { db, cred } of targets) {
      for (const table of await readSchema(ctx, db, cred)) {
        if (table.name.toLowerCase().includes(needle)) {
          matches.push({ database_id: db.id, schema: table.schema, table: table.name, kind: table.kind });
        }
        for (const column of table.columns) {
          if (column.name.toLowerCase().includes(needle)) {
            matches.push({
              database_id: db.id,
              schema: table.schema,
              table: table.name,
              column: column.name,
              type: column.type,
            });
          }
        }
        if (matches.length >= 200) return { matches: matches.slice(0, 200), truncated: true };
      }
    }
    return { matches, truncated: false };
  },
};

const ProtectionInput = v.object({ database_id: v.optional(OnlyDatabase) });

export const getDataProtectionTool: ToolDef<typeof ProtectionInput> = {
  name: 'get_data_protection',
  title: 'Get data protection',
  description:
    'What your data-protection policy hides or masks in query results (per database, table and column), so you ' +
    'can tell a redacted value from a real one.',
  input: ProtectionInput,
  readOnly: true,
  async run(ctx, input) {
    return describeDataProtection(ctx, input.database_id);
  },
};
