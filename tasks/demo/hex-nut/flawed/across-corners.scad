// Hex nut drawn with 17 across the corners instead of across the flats.
$fn = 96;
af = 17; m = 8; bore = 10;

difference() {
    cylinder(d = af, h = m, $fn = 6);
    translate([0, 0, -1]) cylinder(d = bore, h = m + 2);
}
