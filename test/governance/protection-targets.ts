// Target databases for the data-protection suites: a fresh database on the harness's PostgreSQL
// or MariaDB, seeded with the secrets of protection-fixture.ts, registered with a real service
// whose member role has the fixture's policy. Each suite gets its own database and service.
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { newId } from '../../store/ids.ts';
import { servers } from '../harness/servers.ts';
import { type ProtectionFixture, SECRETS, startFixture } from './protection-fixture.ts';

export interface Target {
  fx: ProtectionFixture;
  /** The target database's name (MySQL qualifies stored functions with it). */
  dbName: string;
  stop(): Promise<void>;
}

const freshName = () => `prot_${newId('db').slice(-10).toLowerCase()}`;

export async function startPostgresTarget(): Promise<Target> {
  const pg = servers().postgres;
  const dbName = freshName();
  const connect = (database: string) =>
    postgres({
      host: pg.host,
      port: pg.port,
      user: pg.user,
      password: pg.password,
      database,
      onnotice: () => {},
    });
  const admin = connect(pg.database);
  await admin.unsafe(`create database ${dbName}`);
  const target = connect(dbName);
  try {
    await target.unsafe(`
      create table users (id int primary key, email text not null, name text, ssn varchar(11), phone text, salary int);
      create table orders (id int primary key, user_id int references users(id), total numeric, note text, placed date, meta jsonb);
      create function leak_emails() returns setof text language sql as 'select email from users';
      create function initcap(int) returns text language sql as 'select email from users limit 1';
      create sequence s;`);
    for (const [i, email] of SECRETS.emails.entries()) {
      await target`insert into users values (${i + 1}, ${email}, ${`user${i + 1}`}, ${SECRETS.ssns[i]!}, ${SECRETS.phones[i]!}, ${SECRETS.salaries[i]!})`;
      await target.unsafe(
        `insert into orders values (${i + 1}, ${i + 1}, ${(i + 1) * 10}, 'order ${i + 1}', date '2024-0${i + 1}-15', '{"tags": ["a", "b${i}"], "n": ${i}}')`,
      );
    }
  } finally {
    await target.end();
  }
  const fx = await startFixture({
    name: 'pg-protected',
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: dbName,
    credentials: [
      { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
    ],
  });
  return {
    fx,
    dbName,
    async stop() {
      await fx.stop();
      await admin.unsafe(`drop database if exists ${dbName} with (force)`);
      await admin.end();
    },
  };
}

export async function startMariadbTarget(): Promise<Target> {
  const my = servers().mariadb;
  const dbName = freshName();
  const admin = await mysql.createConnection({
    host: my.host,
    port: my.port,
    user: my.user,
    password: my.password,
    multipleStatements: true,
  });
  await admin.query(`create database ${dbName}`);
  await admin.query(`use ${dbName}`);
  await admin.query(`
    create table users (id int primary key, email varchar(200) not null, name varchar(50), ssn varchar(11), phone varchar(20), salary int);
    create table orders (id int primary key, user_id int, total decimal(10,2), note varchar(20), placed date, meta json, fulltext (note)) engine=InnoDB;
    create function leak_email() returns varchar(200) reads sql data return (select email from users limit 1);`);
  for (const [i, email] of SECRETS.emails.entries()) {
    await admin.execute('insert into users values (?, ?, ?, ?, ?, ?)', [
      i + 1,
      email,
      `user${i + 1}`,
      SECRETS.ssns[i]!,
      SECRETS.phones[i]!,
      SECRETS.salaries[i]!,
    ]);
    await admin.execute('insert into orders values (?, ?, ?, ?, ?, ?)', [
      i + 1,
      i + 1,
      (i + 1) * 10,
      `order ${i + 1}`,
      `2024-0${i + 1}-15`,
      JSON.stringify({ tags: ['a', `b${i}`], n: i }),
    ]);
  }
  const fx = await startFixture({
    name: 'maria-protected',
    adapter: 'mysql',
    hostname: my.host,
    port: my.port,
    database: dbName,
    credentials: [
      { username: my.user, password: my.password, reviews_required: 0, default_credential: true },
    ],
  });
  return {
    fx,
    dbName,
    async stop() {
      await fx.stop();
      await admin.query(`drop database if exists ${dbName}`);
      await admin.end();
    },
  };
}
