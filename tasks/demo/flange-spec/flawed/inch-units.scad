// Flawed: every dimension written in inches (the drawing is in mm), so the
// part is 25.4 times too small; shape and topology are right.
$fn = 64;
L = 5.5118; W = 3.5433; T = 0.4724; R = 0.315;
bore = 1.5748;
hole_d = 0.2598; cbore_d = 0.4331; cbore_depth = 0.2559;
holes = [[0.5906, 0.5906], [4.9213, 0.5906], [0.5906, 2.9528], [4.9213, 2.9528]];

module outline(d)
    difference() {
        offset(r = R) translate([R, R]) square([L - 2 * R, W - 2 * R]);
        translate([L / 2, W / 2]) circle(d = bore);
        for (p = holes) translate(p) circle(d = d);
    }

linear_extrude(T - cbore_depth) outline(hole_d);
translate([0, 0, T - cbore_depth]) linear_extrude(cbore_depth) outline(cbore_d);
