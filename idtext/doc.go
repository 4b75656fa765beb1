// Package idtext writes IDs as short fixed-width strings and reads them back:
// base62 (the alphabet 0-9A-Za-z in ASCII order, 11 characters,
// case-sensitive) and Crockford's base32 (13 characters, case-insensitive,
// with I and L read as 1 and O as 0). Both are fixed width, so their strings
// sort as the numbers do under a byte-wise (binary) comparison.
//
// For storage prefer Crockford's base32 or a binary collation: MySQL's
// default collations compare case-insensitively, so two base62 strings that
// differ only in case are equal there.
//
// The Append functions allocate nothing; the Parse functions return an error
// for any string that is not exactly one encoded ID.
package idtext
