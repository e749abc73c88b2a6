// L-bracket with a sharp inner corner.
$fn = 96;
leg = 80; w = 60; t = 10;
hole_d = 9; hole_at = 50; hole_y = [15, 45];

difference() {
    union() {
        cube([leg, w, t]);
        cube([t, w, leg]);
    }
    for (y = hole_y) {
        translate([hole_at, y, -1]) cylinder(d = hole_d, h = t + 2);
        translate([-1, y, hole_at]) rotate([0, 90, 0]) cylinder(d = hole_d, h = t + 2);
    }
}
