// Package tinyidtest holds Didi Tinyid's token table as Tinyid ships it,
// for the tests of every package that reads it.
package tinyidtest

import "strings"

// SampleToken is the token of db.sql's sample rows, for the bizTypes test
// and test_odd.
const SampleToken = "0f673adf80504e2eaa552f5d791b644c"

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

// TokenTable returns the statements that create Tinyid's token table
// under the name table, with its sample rows, for dialect "mysql" or
// "postgres".
func TokenTable(dialect, table string) []string {
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
