package legacytest

import (
	"fmt"
	"strings"
)

// uidgenDDL is WORKER_NODE, verbatim from github.com/baidu/uid-generator
// src/main/scripts/WORKER_NODE.sql lines 2–13 (commit
// 2fcbc13d2016fcfb7648a18296951f6942215255). It is MySQL's only.
const uidgenDDL = "CREATE TABLE WORKER_NODE\n" +
	"(\n" +
	"ID BIGINT NOT NULL AUTO_INCREMENT COMMENT 'auto increment id',\n" +
	"HOST_NAME VARCHAR(64) NOT NULL COMMENT 'host name',\n" +
	"PORT VARCHAR(64) NOT NULL COMMENT 'port',\n" +
	"TYPE INT NOT NULL COMMENT 'node type: ACTUAL or CONTAINER',\n" +
	"LAUNCH_DATE DATE NOT NULL COMMENT 'launch date',\n" +
	"MODIFIED TIMESTAMP NOT NULL COMMENT 'modified time',\n" +
	"CREATED TIMESTAMP NOT NULL COMMENT 'created time',\n" +
	"PRIMARY KEY(ID)\n" +
	")\n" +
	" COMMENT='DB WorkerID Assigner for UID Generator',ENGINE = INNODB;"

// insert is the statement every start of DisposableWorkerIdAssigner runs
// (DisposableWorkerIdAssigner.assignWorkerId, line 54), verbatim from
// src/main/resources/META-INF/mybatis/mapper/WORKER_NODE.xml lines 17–30
// with MyBatis's #{…} parameters bound. uid-generator ships no sample
// rows: the tests bind the values a process on an actual machine gives
// (buildWorkerNode, lines 71–73: the host's address, the start time in
// milliseconds and a random number as PORT, type ACTUAL = 1).
const insert = "INSERT INTO WORKER_NODE\n" +
	"\t\t(HOST_NAME,\n" +
	"\t\tPORT,\n" +
	"\t\tTYPE,\n" +
	"\t\tLAUNCH_DATE,\n" +
	"\t\tMODIFIED,\n" +
	"\t\tCREATED)\n" +
	"\t\tVALUES (\n" +
	"\t\t'%s',\n" +
	"\t\t'%s',\n" +
	"\t\t%d,\n" +
	"\t\t'%s',\n" +
	"\t\tNOW(),\n" +
	"\t\tNOW())"

// UidgenTable returns the statements that create WORKER_NODE under the name
// table and record starts processes, each a row whose ID is the worker ID
// it was given (1, 2, … in order).
func UidgenTable(table string, starts int) []string {
	stmts := []string{uidgenDDL}
	for i := range starts {
		stmts = append(stmts, fmt.Sprintf(insert, fmt.Sprintf("10.0.0.%d", i+1), fmt.Sprintf("1732000000%03d-%d", i, 4711*(i+1)), 1, "2024-11-19"))
	}
	for i, s := range stmts {
		stmts[i] = strings.ReplaceAll(s, "WORKER_NODE", table)
	}
	return stmts
}
