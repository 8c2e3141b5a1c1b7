// Functions and operators a statement may call under a policy. An allowlist, not a denylist:
// a function the rewriter does not know could run SQL of its own (query_to_xml, dblink, a
// PL/pgSQL function reading any table), sleep on a secret (pg_sleep, BENCHMARK), or read files.

const COMMON = `
count sum avg min max stddev stddev_pop stddev_samp variance var_pop var_samp bit_and bit_or
row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
lower upper length char_length character_length octet_length bit_length substr substring trim ltrim rtrim
concat concat_ws replace left right lpad rpad repeat reverse ascii
abs ceil ceiling floor round mod power pow sqrt exp ln log log10 sign greatest least
now current_date current_timestamp current_time localtime localtimestamp extract md5
regexp_replace regexp_substr regexp_instr regexp_like coalesce nullif
`;

const POSTGRES_ONLY = `
string_agg array_agg bool_and bool_or every json_agg jsonb_agg json_object_agg jsonb_object_agg
percentile_cont percentile_disc mode corr covar_pop covar_samp
initcap btrim strpos position split_part starts_with translate regexp_match regexp_matches
regexp_split_to_array regexp_split_to_table regexp_count format to_char to_number to_date to_timestamp
encode decode chr quote_ident quote_literal quote_nullable
trunc cbrt div width_bucket pi random
date_trunc date_part date_bin make_date make_time make_timestamp make_timestamptz make_interval age
clock_timestamp statement_timestamp transaction_timestamp timezone justify_days justify_hours
justify_interval isfinite
to_json to_jsonb row_to_json array_to_json json_build_object jsonb_build_object json_build_array
jsonb_build_array json_object jsonb_object json_array_length jsonb_array_length json_typeof jsonb_typeof
json_extract_path json_extract_path_text jsonb_extract_path jsonb_extract_path_text jsonb_pretty jsonb_set
jsonb_insert jsonb_strip_nulls json_strip_nulls json_each jsonb_each json_each_text jsonb_each_text
json_array_elements jsonb_array_elements json_array_elements_text jsonb_array_elements_text
json_object_keys jsonb_object_keys json_populate_record jsonb_populate_record json_to_record
jsonb_to_record json_to_recordset jsonb_to_recordset jsonb_path_query jsonb_path_query_array
jsonb_path_query_first jsonb_path_exists jsonb_path_match
array_length array_to_string string_to_array unnest cardinality array_position array_positions
array_remove array_replace array_append array_prepend array_cat array_upper array_lower
generate_series generate_subscripts num_nulls num_nonnulls gen_random_uuid sha224 sha256 sha384 sha512
`;

const MYSQL_ONLY = `
group_concat json_arrayagg json_objectagg std
lcase ucase substring_index locate instr position format date_format str_to_date curdate curtime
date datediff date_add date_sub adddate subdate year month day dayofmonth dayofweek dayofyear hour
minute second week weekday weekofyear dayname monthname quarter timestampdiff timestampadd
unix_timestamp from_unixtime last_day makedate maketime time time_format to_days utc_timestamp sysdate
truncate rand ifnull if isnull field elt ord bin oct conv hex unhex sha1 sha2 crc32 uuid char
json_object json_array json_extract json_unquote json_length json_keys json_contains json_valid
json_type json_quote json_depth json_search json_value cast convert exists space strcmp soundex
`;

const words = (s: string) => s.split(/\s+/).filter(Boolean);

/** Built-in Postgres functions (schema pg_catalog, or unqualified) allowed under a policy. */
export const POSTGRES_FUNCTIONS: ReadonlySet<string> = new Set([...words(COMMON), ...words(POSTGRES_ONLY)]);

/** Built-in MySQL/MariaDB functions allowed under a policy (compared lower-case). */
export const MYSQL_FUNCTIONS: ReadonlySet<string> = new Set([...words(COMMON), ...words(MYSQL_ONLY)]);

/**
 * Built-in Postgres operators allowed under a policy. A user-defined operator calls an
 * arbitrary function, so it is refused like one.
 */
export const POSTGRES_OPERATORS: ReadonlySet<string> = new Set(
  words(
    `= <> != < > <= >= + - * / % ^ || ~~ !~~ ~~* !~~* ~ ~* !~ !~* @> <@ && -> ->> #> #>> ? ?| ?& @? @@ #- |/ ||/ @ & | # << >>`,
  ),
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
