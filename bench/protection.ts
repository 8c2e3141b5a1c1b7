// Data-protection rewrite cost: planning a typical statement under a policy (parse, resolve,
// replace, print back) against parsing the same statement alone with the same parser, in the
// same run. The no-policy fast path is one indexed store lookup and no parsing at all.
import nodeSqlParser from 'node-sql-parser';
import { rewriteMysql } from '../governance/protection/mysql.ts';
import { parsePg } from '../governance/protection/pg-parse.ts';
import { rewritePostgres } from '../governance/protection/postgres.ts';
import { loadPostgresParser as loadParser } from '../sql/parse.ts';
import { testRules, testSchema } from '../test/fixtures/protection-schema.ts';
import { type Bench, type BenchRow, percentile, sample } from './report.ts';

const SQL =
  "select u.id, u.email, lower(u.name), o.total from users u join orders o on o.user_id = u.id where u.email like 'a%' and o.total > 10 order by u.id limit 50";
const N = 2000;

const ms = (x: number) => `${x.toFixed(3)} ms p50`;

async function pair(
  figure: string,
  baselineName: string,
  measured: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
): Promise<BenchRow> {
  const base = percentile(await sample(N, baseline), 50);
  const value = percentile(await sample(N, measured), 50);
  return {
    figure,
    value: ms(value),
    baseline: `${baselineName} ${ms(base)}`,
    comparison: `+${(value - base).toFixed(3)} ms`,
  };
}

export default {
  name: 'data protection',
  async run() {
    await loadParser();
    const pgSchema = testSchema('public', false);
    const pgRules = testRules(false);
    const mySchema = testSchema('shop', true);
    const myRules = testRules(true);
    const parser = new nodeSqlParser.Parser();
    return [
      await pair(
        'rewrite under a policy (postgres)',
        'parse only',
        () => rewritePostgres(SQL, pgSchema, pgRules),
        async () => parsePg(SQL),
      ),
      await pair(
        'rewrite under a policy (mysql)',
        'parse only',
        async () => rewriteMysql(SQL, mySchema, myRules),
        async () => parser.astify(SQL, { database: 'MariaDB' }),
      ),
    ];
  },
} satisfies Bench;
