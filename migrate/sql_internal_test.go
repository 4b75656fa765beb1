package migrate

import "testing"

func TestWholeID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
		ok   bool
	}{
		{"an integer column", "1844674407370955161", 1844674407370955161, true},
		{"MySQL's DECIMAL(65,10)", "999.0000000000", 999, true},
		{"CHAR padding", "42   ", 42, true},
		{"the largest int64", "9223372036854775807", 9223372036854775807, true},
		{"past int64", "9223372036854775808", 0, false},
		{"a fraction", "12.5000000000", 0, false},
		{"not a number", "abc", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wholeID(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("wholeID(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}
