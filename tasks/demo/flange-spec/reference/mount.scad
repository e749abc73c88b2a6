// Rectangular mounting flange: L 140 x W 90 x T 12, corners R 8, bore 40,
// four M6 counterbored holes (6.6 through, 11 x 6.5 deep from the top face).
// Two layers: clearance holes below the counterbore floor, counterbores above.
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

linear_extrude(T - cbore_depth) outline(hole_d);
translate([0, 0, T - cbore_depth]) linear_extrude(cbore_depth) outline(cbore_d);
