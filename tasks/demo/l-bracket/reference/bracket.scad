// L-bracket: legs 80 x 60 x 10, inner fillet R10, two 9 mm holes per leg.
$fn = 96;
leg = 80; w = 60; t = 10; r = 10;
hole_d = 9; hole_at = 50; hole_y = [15, 45];

difference() {
    union() {
        cube([leg, w, t]);                           // base leg on z = 0
        cube([t, w, leg]);                           // upright leg on x = 0
        // inner fillet: square r x r in the corner minus the quarter round
        translate([t, 0, t]) difference() {
            cube([r, w, r]);
            translate([r, -1, r]) rotate([-90, 0, 0]) cylinder(r = r, h = w + 2);
        }
    }
    for (y = hole_y) {
        translate([hole_at, y, -1]) cylinder(d = hole_d, h = t + 2);
        translate([-1, y, hole_at]) rotate([0, 90, 0]) cylinder(d = hole_d, h = t + 2);
    }
}
