// Plate flange, bolt circle taken as 100 instead of 120.
$fn = 96;
od = 160; t = 20; bore = 60;
n_holes = 6; hole_d = 18; pcd = 100;

difference() {
    cylinder(d = od, h = t);
    translate([0, 0, -1]) cylinder(d = bore, h = t + 2);
    for (i = [0 : n_holes - 1])
        rotate([0, 0, i * 360 / n_holes])
            translate([pcd / 2, 0, -1]) cylinder(d = hole_d, h = t + 2);
}
