// Flawed: the counterbores are cut from the bottom face (z = 0) instead of
// the top: same volume and area, the part upside down.
$fn = 64;
L = 140; W = 90; T = 12; R = 8;
bore = 40;
hole_d = 6.6; cbore_d = 11; cbore_depth = 6.5;
holes = [[15, 15], [125, 15], [15, 75], [125, 75]];

module outline(d)
    difference() {
        offset(r = R) translate([R, R]) square([L - 2 * R, W - 2 * R]);
        translate([L / 2, W / 2]) circle(d = bore);
        for (p = holes) translate(p) circle(d = d);
    }

linear_extrude(cbore_depth) outline(cbore_d);
translate([0, 0, cbore_depth]) linear_extrude(T - cbore_depth) outline(hole_d);
