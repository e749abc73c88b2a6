// The existing solid bar, 40 x 40, 500 long along x.
L = 500; b = 40;

translate([0, -b / 2, -b / 2]) cube([L, b, b]);
