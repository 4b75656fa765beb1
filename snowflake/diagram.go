package snowflake

import (
	"fmt"
	"strings"
)

// Diagram draws the layout's bits as text: one box per part, most
// significant bits on the left, with the bit positions each covers under
// it. Bits above the layout's width are "unused", or "sign" when only
// bit 63 is left (the ID fits a signed BIGINT). firn layout prints it;
// it ends in a newline.
func (l Layout) Diagram() string {
	var border, labels, bits strings.Builder
	border.WriteString("+")
	labels.WriteString("|")
	bits.WriteString(" ")
	for _, b := range l.boxes() {
		pos := fmt.Sprintf("%d", b.hi)
		if b.lo != b.hi {
			pos = fmt.Sprintf("%d-%d", b.hi, b.lo)
		}
		width := max(len(b.label), len(pos)) + 2
		border.WriteString(strings.Repeat("-", width) + "+")
		labels.WriteString(center(b.label, width) + "|")
		bits.WriteString(center(pos, width) + " ")
	}
	return border.String() + "\n" + labels.String() + "\n" + border.String() + "\n" +
		strings.TrimRight(bits.String(), " ") + "\n"
}

// box is one part of the diagram: its label and the bits it covers.
type box struct {
	label  string
	hi, lo int
}

// boxes are the diagram's parts, most significant first.
func (l Layout) boxes() []box {
	var boxes []box
	bit := 64
	add := func(label string, bits int) {
		if bits > 0 {
			boxes = append(boxes, box{label: label, hi: bit - 1, lo: bit - bits})
			bit -= bits
		}
	}
	add("unused", 64-l.Bits())
	if l.Bits() < 64 && boxes[0].hi == 63 && boxes[0].lo == 63 {
		boxes[0].label = "sign"
	}
	for _, p := range l.order() {
		switch p {
		case PartTime:
			add(fmt.Sprintf("time %d", l.TimeBits), l.TimeBits)
		case PartNode:
			for _, f := range l.Node {
				add(fmt.Sprintf("%s %d", f.Name, f.Bits), f.Bits)
			}
		case PartSequence:
			add(fmt.Sprintf("sequence %d", l.SequenceBits), l.SequenceBits)
		}
	}
	return boxes
}

// center pads s with spaces on both sides to width.
func center(s string, width int) string {
	left := (width - len(s)) / 2
	return strings.Repeat(" ", left) + s + strings.Repeat(" ", width-len(s)-left)
}
