// Which functions a statement may call under a policy. Every column reference the rewriter
// resolves is already replaced by its mask, so an ordinary built-in function only ever sees
// masked values: whatever it computes (lower, overlay, to_tsvector, an error that quotes its
// argument, the time it takes) is a function of the mask. What can carry a protected value out
// is a function that reaches data by itself: running SQL of its own (query_to_xml, ts_stat), a
// user-defined function (arbitrary code reading any table), files and large objects, the
// catalog and statistics, settings, or sleeping on a condition. Those are refused by name;
// built-in functions are allowed; names the server does not know answer as the server would.

/** Why a function is refused, in words a SQL user knows. */
export type RefusalReason =
  | 'runs SQL of its own'
  | 'reads files or large objects'
  | 'can leak through timing'
  | 'reads or changes server settings'
  | 'reads the system catalog or server state'
  | 'has side effects';

const named = (reason: RefusalReason, names: string): Array<[string, RefusalReason]> =>
  names
    .split(/\s+/)
    .filter(Boolean)
    .map((n) => [n, reason]);

/** Built-in Postgres functions refused by name (the prefixes below cover whole families). */
const POSTGRES_REFUSED = new Map<string, RefusalReason>([
  ...named(
    'runs SQL of its own',
    `query_to_xml query_to_xmlschema query_to_xml_and_xmlschema table_to_xml table_to_xmlschema
     table_to_xml_and_xmlschema cursor_to_xml cursor_to_xmlschema schema_to_xml schema_to_xmlschema
     schema_to_xml_and_xmlschema database_to_xml database_to_xmlschema database_to_xml_and_xmlschema
     ts_stat ts_rewrite dblink dblink_exec dblink_open dblink_fetch dblink_send_query`,
  ),
  ...named('reads files or large objects', 'loread lowrite'),
  ...named('reads or changes server settings', 'current_setting set_config'),
  ...named('has side effects', 'nextval setval currval lastval'),
  ...named(
    'reads the system catalog or server state',
    `obj_description col_description shobj_description row_security_active
     current_query inet_client_addr inet_client_port inet_server_addr inet_server_port`,
  ),
]) as ReadonlyMap<string, RefusalReason>;

/** Whole families: pg_* reads the catalog or server state (pg_sleep: timing), lo_* large objects. */
const POSTGRES_REFUSED_PREFIXES: Array<[string, RefusalReason]> = [
  ['pg_sleep', 'can leak through timing'],
  ['pg_read_', 'reads files or large objects'],
  ['pg_ls_', 'reads files or large objects'],
  ['pg_stat_file', 'reads files or large objects'],
  ['pg_', 'reads the system catalog or server state'],
  ['lo_', 'reads files or large objects'],
  ['has_', 'reads the system catalog or server state'],
  ['to_reg', 'reads the system catalog or server state'],
  ['txid_', 'has side effects'],
  ['brin_', 'has side effects'],
  ['gin_', 'has side effects'],
  ['binary_upgrade_', 'has side effects'],
];

/** pg_* functions that only look at their argument. */
const POSTGRES_PG_ALLOWED = new Set(['pg_typeof', 'pg_column_size', 'pg_size_pretty', 'pg_size_bytes']);

/** Why a built-in Postgres function is refused, or null when it may run. */
export function postgresRefusal(name: string): RefusalReason | null {
  const n = name.toLowerCase();
  if (POSTGRES_PG_ALLOWED.has(n)) return null;
  const byName = POSTGRES_REFUSED.get(n);
  if (byName) return byName;
  return POSTGRES_REFUSED_PREFIXES.find(([prefix]) => n.startsWith(prefix))?.[1] ?? null;
}

/** MySQL/MariaDB built-in functions refused by name. */
const MYSQL_REFUSED = new Map<string, RefusalReason>([
  ...named(
    'can leak through timing',
    `sleep benchmark get_lock release_lock release_all_locks is_free_lock is_used_lock
     master_pos_wait master_gtid_wait source_pos_wait wait_for_executed_gtid_set`,
  ),
  ...named('reads files or large objects', 'load_file'),
  ...named('has side effects', 'nextval setval lastval last_insert_id found_rows row_count'),
  ...named('reads the system catalog or server state', 'column_json_schema'),
]) as ReadonlyMap<string, RefusalReason>;

/** Why a built-in MySQL function is refused, or null when it may run. */
export function mysqlRefusal(name: string): RefusalReason | null {
  return MYSQL_REFUSED.get(name.toLowerCase()) ?? null;
}

/**
 * Built-in MySQL/MariaDB functions (MariaDB 10.x and MySQL 8, item_create.cc and the grammar's
 * own function syntax). The server does not list them, so this list is how the rewriter tells
 * a built-in from a stored function; a name on neither list answers as the server would.
 */
export const MYSQL_BUILTINS: ReadonlySet<string> = new Set(
  `abs acos add_months adddate addtime aes_decrypt aes_encrypt any_value ascii asin atan atan2 avg
  benchmark bin binlog_gtid_pos bit_and bit_count bit_length bit_or bit_xor cast ceil ceiling char
  char_length character_length charset chr coalesce coercibility collation column_add column_check
  column_create column_delete column_exists column_get column_json column_list compress concat
  concat_operator_oracle concat_ws connection_id conv convert convert_tz cos cot count crc32 crc32c
  cume_dist curdate current_date current_role current_time current_timestamp current_user curtime
  database date date_add date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear
  decode decode_histogram default degrees dense_rank des_decrypt des_encrypt elt encode encrypt exp
  export_set extract extractvalue field find_in_set first_value floor format format_bytes
  format_pico_time from_base64 from_days from_unixtime get_format greatest group_concat hex hour if
  ifnull inet6_aton inet6_ntoa inet_aton inet_ntoa insert instr interval is_ipv4 is_ipv4_compat
  is_ipv4_mapped is_ipv6 isnull json_array json_array_append json_array_insert json_arrayagg
  json_compact json_contains json_contains_path json_depth json_detailed json_equals json_exists
  json_extract json_insert json_keys json_length json_loose json_merge json_merge_patch
  json_merge_preserve json_normalize json_object json_objectagg json_overlaps json_pretty json_query
  json_quote json_remove json_replace json_search json_set json_table json_type json_unquote
  json_valid json_value kdf lag last_day last_value lcase lead least left length lengthb ln
  load_file locate localtime localtimestamp log log10 log2 lower lpad ltrim make_set makedate
  maketime max md5 median microsecond mid min minute mod month monthname months_between
  name_const natural_sort_key now nth_value ntile nullif nvl nvl2 oct octet_length old_password
  ord password percent_rank percentile_cont percentile_disc period_add period_diff pi position pow
  power quarter quote radians rand random_bytes rank regexp_instr regexp_like regexp_replace
  regexp_substr release_all_locks release_lock repeat replace reverse right round row_number rpad
  rtrim schema sec_to_time second session_user sformat sha sha1 sha2 sign sin sleep soundex space
  sqrt std stddev stddev_pop stddev_samp str_to_date strcmp subdate substr substring
  substring_index subtime sum sys_guid sysdate system_user tan time time_format time_to_sec
  timediff timestamp timestampadd timestampdiff to_base64 to_char to_days to_seconds trim
  trim_oracle truncate ucase uncompress uncompressed_length unhex unix_timestamp updatexml upper
  user utc_date utc_time utc_timestamp uuid uuid_short values var_pop var_samp variance version
  week weekday weekofyear weight_string year yearweek exists
  st_area st_asbinary st_astext st_aswkb st_aswkt st_geomfromtext st_geometryfromtext st_x st_y
  st_distance st_contains st_within st_intersects point linestring polygon`
    .split(/\s+/)
    .filter(Boolean),
);

/** Postgres functions allowed when the server's catalog was not read (the rewriters' unit tests). */
export const POSTGRES_FALLBACK_FUNCTIONS: ReadonlySet<string> = new Set(
  `count sum avg min max lower upper length substr substring trim concat replace left right md5
   coalesce nullif now overlay similar_to_escape encode convert_to to_tsvector xmlagg pg_typeof
   string_agg array_agg json_agg jsonb_agg json_build_object row_number rank first_value row_to_json to_jsonb
   date_trunc extract to_char regexp_replace regexp_matches generate_series`
    .split(/\s+/)
    .filter(Boolean),
);

/** Built-in Postgres operators when the server's catalog was not read (unit tests). */
export const POSTGRES_FALLBACK_OPERATORS: ReadonlySet<string> = new Set(
  `= <> != < > <= >= + - * / % ^ || ~~ !~~ ~~* !~~* ~ ~* !~ !~* @> <@ && -> ->> #> #>> ? ?| ?& @? @@
   #- |/ ||/ @ & | # << >> ^@`
    .split(/\s+/)
    .filter(Boolean),
);

/** Set-returning functions in FROM whose output columns are known: name → columns (null: the alias). */
export const POSTGRES_TABLE_FUNCTION_COLUMNS: ReadonlyMap<string, string[] | null> = new Map([
  ['generate_series', null],
  ['json_each', ['key', 'value']],
  ['jsonb_each', ['key', 'value']],
  ['json_each_text', ['key', 'value']],
  ['jsonb_each_text', ['key', 'value']],
  ['json_array_elements', ['value']],
  ['jsonb_array_elements', ['value']],
  ['json_array_elements_text', ['value']],
  ['jsonb_array_elements_text', ['value']],
  ['json_object_keys', null],
  ['jsonb_object_keys', null],
]);
