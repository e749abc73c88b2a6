// Plain shaft along x, length 300, diameter from the sizing script.
include <shaft_d.scad>
$fn = 96;
L = 300;

rotate([0, 90, 0]) cylinder(d = d, h = L);
