// L-bracket with the R10 round on the outer (heel) corner instead of the inner one.
$fn = 96;
leg = 80; w = 60; t = 10; r = 10;
hole_d = 9; hole_at = 50; hole_y = [15, 45];

difference() {
    union() {
        cube([leg, w, t]);
        cube([t, w, leg]);
    }
    // round off the heel
    translate([0, -1, 0]) difference() {
        translate([-1, 0, -1]) cube([r + 1, w + 2, r + 1]);
        translate([r, -1, r]) rotate([-90, 0, 0]) cylinder(r = r, h = w + 4);
    }
    for (y = hole_y) {
        translate([hole_at, y, -1]) cylinder(d = hole_d, h = t + 2);
        translate([-1, y, hole_at]) rotate([0, 90, 0]) cylinder(d = hole_d, h = t + 2);
    }
}
