// Stack bond: courses not offset.
bl = 215; bw = 102.5; bh = 65; joint = 10;
courses = 10; per_course = 10;

for (c = [0 : courses - 1], i = [0 : per_course - 1])
    translate([i * (bl + joint), 0, c * (bh + joint)])
        cube([bl, bw, bh]);
