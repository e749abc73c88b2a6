// Flawed: the centre bore is missing; the bolt pattern is right.
$fn = 64;
L = 140; W = 90; T = 12; R = 8;
hole_d = 6.6; cbore_d = 11; cbore_depth = 6.5;
holes = [[15, 15], [125, 15], [15, 75], [125, 75]];

module outline(d)
    difference() {
        offset(r = R) translate([R, R]) square([L - 2 * R, W - 2 * R]);
        for (p = holes) translate(p) circle(d = d);
    }

linear_extrude(T - cbore_depth) outline(hole_d);
translate([0, 0, T - cbore_depth]) linear_extrude(cbore_depth) outline(cbore_d);
