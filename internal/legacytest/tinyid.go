package legacytest

import "strings"

// TinyidSampleToken is the token of db.sql's sample rows, for the bizTypes test
// and test_odd.
const TinyidSampleToken = "0f673adf80504e2eaa552f5d791b644c"

// tokenDDL is Tinyid's tiny_id_token table, verbatim from
// github.com/didi/tinyid tinyid-server/db.sql lines 16–24 (commit
// 49976d37222ab1089a8c413b4520cc55d105d428).
const tokenDDL = "CREATE TABLE `tiny_id_token` (\n" +
	"  `id` int(11) unsigned NOT NULL AUTO_INCREMENT COMMENT '自增id',\n" +
	"  `token` varchar(255) NOT NULL DEFAULT '' COMMENT 'token',\n" +
	"  `biz_type` varchar(63) NOT NULL DEFAULT '' COMMENT '此token可访问的业务类型标识',\n" +
	"  `remark` varchar(255) NOT NULL DEFAULT '' COMMENT '备注',\n" +
	"  `create_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00' COMMENT '创建时间',\n" +
	"  `update_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00' COMMENT '更新时间',\n" +
	"  PRIMARY KEY (`id`)\n" +
	") ENGINE=InnoDB AUTO_INCREMENT=1 DEFAULT CHARSET=utf8 COMMENT 'token信息表';"

// tokenPostgres is the same table for PostgreSQL (Tinyid ships MySQL's
// DDL only): the columns and defaults of db.sql, without MySQL's
// comments, engine and quoting.
const tokenPostgres = `CREATE TABLE tiny_id_token (
  id          SERIAL PRIMARY KEY,
  token       VARCHAR(255) NOT NULL DEFAULT '',
  biz_type    VARCHAR(63)  NOT NULL DEFAULT '',
  remark      VARCHAR(255) NOT NULL DEFAULT '',
  create_time TIMESTAMP    NOT NULL DEFAULT '2010-01-01 00:00:00',
  update_time TIMESTAMP    NOT NULL DEFAULT '2010-01-01 00:00:00'
)`

// tokenRows are db.sql's sample rows, lines 35–41.
var tokenRows = []string{
	"INSERT INTO `tiny_id_token` (`id`, `token`, `biz_type`, `remark`, `create_time`, `update_time`)\nVALUES\n\t(1, '0f673adf80504e2eaa552f5d791b644c', 'test', '1', '2017-12-14 16:36:46', '2017-12-14 16:36:48');",
	"INSERT INTO `tiny_id_token` (`id`, `token`, `biz_type`, `remark`, `create_time`, `update_time`)\nVALUES\n\t(2, '0f673adf80504e2eaa552f5d791b644c', 'test_odd', '1', '2017-12-14 16:36:46', '2017-12-14 16:36:48');",
}

// TinyidTokenTable returns the statements that create Tinyid's token table
// under the name table, with its sample rows, for dialect "mysql" or
// "postgres".
func TinyidTokenTable(dialect, table string) []string {
	stmts := append([]string{tokenDDL}, tokenRows...)
	if dialect == "postgres" {
		stmts = []string{tokenPostgres}
		for _, row := range tokenRows {
			stmts = append(stmts, strings.ReplaceAll(row, "`", ""))
		}
	}
	for i, s := range stmts {
		stmts[i] = strings.ReplaceAll(s, "tiny_id_token", table)
	}
	return stmts
}

// infoDDL is Tinyid's tiny_id_info table, verbatim from db.sql lines 1–14
// (the commit above).
const infoDDL = "CREATE TABLE `tiny_id_info` (\n" +
	"  `id` bigint(20) NOT NULL AUTO_INCREMENT COMMENT '自增主键',\n" +
	"  `biz_type` varchar(63) NOT NULL DEFAULT '' COMMENT '业务类型，唯一',\n" +
	"  `begin_id` bigint(20) NOT NULL DEFAULT '0' COMMENT '开始id，仅记录初始值，无其他含义。初始化时begin_id和max_id应相同',\n" +
	"  `max_id` bigint(20) NOT NULL DEFAULT '0' COMMENT '当前最大id',\n" +
	"  `step` int(11) DEFAULT '0' COMMENT '步长',\n" +
	"  `delta` int(11) NOT NULL DEFAULT '1' COMMENT '每次id增量',\n" +
	"  `remainder` int(11) NOT NULL DEFAULT '0' COMMENT '余数',\n" +
	"  `create_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00' COMMENT '创建时间',\n" +
	"  `update_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00' COMMENT '更新时间',\n" +
	"  `version` bigint(20) NOT NULL DEFAULT '0' COMMENT '版本号',\n" +
	"  PRIMARY KEY (`id`),\n" +
	"  UNIQUE KEY `uniq_biz_type` (`biz_type`)\n" +
	") ENGINE=InnoDB AUTO_INCREMENT=1 DEFAULT CHARSET=utf8 COMMENT 'id信息表';"

// infoPostgres is the same table for PostgreSQL, as tokenPostgres.
const infoPostgres = `CREATE TABLE tiny_id_info (
  id          BIGSERIAL PRIMARY KEY,
  biz_type    VARCHAR(63)  NOT NULL DEFAULT '' UNIQUE,
  begin_id    BIGINT       NOT NULL DEFAULT 0,
  max_id      BIGINT       NOT NULL DEFAULT 0,
  step        INT          DEFAULT 0,
  delta       INT          NOT NULL DEFAULT 1,
  remainder   INT          NOT NULL DEFAULT 0,
  create_time TIMESTAMP    NOT NULL DEFAULT '2010-01-01 00:00:00',
  update_time TIMESTAMP    NOT NULL DEFAULT '2010-01-01 00:00:00',
  version     BIGINT       NOT NULL DEFAULT 0
)`

// infoRows are db.sql's sample rows, lines 26–32: bizType test (max_id 1,
// step 100000, delta 1: the first ID is 2) and test_odd (delta 2,
// remainder 1: the first ID is 3).
var infoRows = []string{
	"INSERT INTO `tiny_id_info` (`id`, `biz_type`, `begin_id`, `max_id`, `step`, `delta`, `remainder`, `create_time`, `update_time`, `version`)\nVALUES\n\t(1, 'test', 1, 1, 100000, 1, 0, '2018-07-21 23:52:58', '2018-07-22 23:19:27', 1);",
	"INSERT INTO `tiny_id_info` (`id`, `biz_type`, `begin_id`, `max_id`, `step`, `delta`, `remainder`, `create_time`, `update_time`, `version`)\nVALUES\n\t(2, 'test_odd', 1, 1, 100000, 2, 1, '2018-07-21 23:52:58', '2018-07-23 00:39:24', 3);",
}

// TinyidInfoTable returns the statements that create Tinyid's segment table
// under the name table, with its sample rows, for dialect "mysql" or
// "postgres".
func TinyidInfoTable(dialect, table string) []string {
	stmts := append([]string{infoDDL}, infoRows...)
	if dialect == "postgres" {
		stmts = []string{infoPostgres}
		for _, row := range infoRows {
			stmts = append(stmts, strings.ReplaceAll(row, "`", ""))
		}
	}
	for i, s := range stmts {
		stmts[i] = strings.ReplaceAll(s, "tiny_id_info", table)
	}
	return stmts
}
