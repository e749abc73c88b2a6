// Plate flange without the bolt circle.
$fn = 96;
od = 160; t = 20; bore = 60;

difference() {
    cylinder(d = od, h = t);
    translate([0, 0, -1]) cylinder(d = bore, h = t + 2);
}
