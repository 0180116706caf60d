// The reference functions of ref.c in SystemVerilog, for Yosys (test_hls_timing.py: synth_xilinx
// -family xcup -nowidelut, then ltp). Each is written as a designer would for synthesis, which
// is not always the C's form: the model must see through the C to the same logic.
module ref_add_cmp (input logic [31:0] a, b, c, output logic y);
  assign y = a + b < c;
endmodule

module ref_mux8 (input logic [255:0] d, input logic [2:0] s, output logic [31:0] y);
  assign y = d[32 * s +: 32];
endmodule

// the lowest set bit: first within each byte, then the lowest byte that has one
module ref_prio64 (input logic [63:0] req, output logic [6:0] r);
  logic [7:0] any;
  logic [23:0] low;  // 3 bits a byte
  always_comb begin
    for (int g = 0; g < 8; g++) begin
      any[g] = |req[8 * g +: 8];
      low[3 * g +: 3] = 3'd0;
      for (int i = 7; i >= 0; i--)
        if (req[8 * g + i]) low[3 * g +: 3] = 3'(i);
    end
    r = 7'd64;
    for (int g = 7; g >= 0; g--)
      if (any[g]) r = {1'b0, 3'(g), low[3 * g +: 3]};
  end
endmodule

// parallel form: bit j of the result is the parity of the state and the data under two masks
// (the CRC is linear), computed from the bit-serial definition in ref.c
module ref_crc32_beat (input logic [31:0] crc_in, input logic [511:0] d, output logic [31:0] crc);
  localparam logic [32 * 32 - 1:0] SM = {
    32'hf2ff0e3b,
    32'h0b808926,
    32'h773f4aa8,
    32'h3b9fa554,
    32'hef30dc91,
    32'h05676073,
    32'h02b3b039,
    32'h73a6d627,
    32'hcb2c6528,
    32'he5963294,
    32'h00341771,
    32'hf2e50583,
    32'h0b8d8cfa,
    32'h05c6c67d,
    32'h02e3633e,
    32'h8171b19f,
    32'h3247d6f4,
    32'h9923eb7a,
    32'h4c91f5bd,
    32'h2648fade,
    32'h13247d6f,
    32'h89923eb7,
    32'h36361160,
    32'h69e4068b,
    32'h34f20345,
    32'h9a7901a2,
    32'hbfc38eea,
    32'h5fe1c775,
    32'h2ff0e3ba,
    32'h97f871dd,
    32'hcbfc38ee,
    32'he5fe1c77};
  localparam logic [32 * 512 - 1:0] DM = {
    512'h826880efa40da72d78c17d03f5a36f178bc1851a6378032be771ea80ba24108954cc6d13abfb4697e18776dc4732caa43bcb8dcab2806c08e826ca8df2ff0e3b,
    512'hc35cc098760b74bbc4a1c3820f72d89c4e21479752c402be14c91fc0e73618cdfeaa5b9a7e06e5dc1144cdb264abaff6262e4b2febc05a0c9c35afcb0b808926,
    512'he3c6e0a39f081d709a919cc2f21a0359acd126d1ca1a0274ed156560c9bf1cefab9940de94f83479e925100575671d5f28dca85d4760410ea63c1d68773f4aa8,
    512'h71e37051cf840eb84d48ce61790d01acd6689368e50d013a768ab2b064df8e77d5cca06f4a7c1a3cf4928802bab38eaf946e542ea3b02087531e0eb43b9fa554,
    512'hba9938c743cfa0715e651a334925efc1e0f5ccae11fe83b6dc34b3d8884bd7b2be2a3d240ec54b899bce32dd1a6b0df3f1fca7dde3587c4b41a9cdd7ef30dc91,
    512'hdf241c8c05ea7715d7f3f01a513198f77bbb634d6b8742f0896bb36cfe01fb500bd97381ac99e3532c606fb2ca074c5dc335de24432c522d48f22c6605676073,
    512'h6f920e4602f53b8aebf9f80d2898cc7bbdddb1a6b5c3a17844b5d9b67f00fda805ecb9c0d64cf1a9963037d96503a62ee19aef1221962916a479163302b3b039,
    512'hb5a187cca5773ae80d3d810561ef092a552f5dc93999d397c52b065b85a46e5d563a31f3c0dd3e432a9f6d30f5b319b34b06fa43a24b7883ba1a419473a6d627,
    512'hd8b84309f6b63a597e5fbd814554eb82a1562bfeffb4eae005e469ad78f627a7ffd175ea4b95d9b674c8c0443deb467d9e48f0eb63a5d049352bea47cb2c6528,
    512'h6c5c2184fb5b1d2cbf2fdec0a2aa75c150ab15ff7fda757002f234d6bc7b13d3ffe8baf525caecdb3a6460221ef5a33ecf247875b1d2e8249a95f523e5963294,
    512'hb446902dd9a029bb27569263a4f655f723940fe5dc953993e608f0ebe4199960ab383069391e30fa7cb546cd48481b3b5c59b1f06a69181aa56c301c00341771,
    512'hd84bc8f948ddb3f0eb6a343227d845ec1a0b82e88d329fe2147592f54828dc390150752737745eeadfddd5bae316c73995e7553287b4e005ba90d283f2e50583,
    512'hee4d649300637ed50d74671ae64f4de186c4446e25e14cdaed4b23fa1e307e95d4645780304169e28e699c0136b9a938f1382753f15a1c0a356ea3cc0b8d8cfa,
    512'h7726b2498031bf6a86ba338d7327a6f0c362223712f0a66d76a591fd0f183f4aea322bc01820b4f14734ce009b5cd49c789c13a9f8ad0e051ab751e605c6c67d,
    512'h3b935924c018dfb5435d19c6b993d37861b1111b89785336bb52c8fe878c1fa5751915e00c105a78a39a67004dae6a4e3c4e09d4fc5687028d5ba8f302e3633e,
    512'h1dc9ac92600c6fdaa1ae8ce35cc9e9bc30d8888dc4bc299b5da9647f43c60fd2ba8c8af006082d3c51cd338026d735271e2704ea7e2b438146add4798171b19f,
    512'h8c8c56a6940b90c028163b725bc79bc993adc15c812617e649a558bf1bc71760098a286ba8ff5009c961ef1c54595037b4d80fbf8d95cdc84b7020b13247d6f4,
    512'h46462b534a05c860140b1db92de3cde4c9d6e0ae40930bf324d2ac5f8de38bb004c51435d47fa804e4b0f78e2a2ca81bda6c07dfc6cae6e425b810589923eb7a,
    512'h232315a9a502e4300a058edc96f1e6f264eb7057204985f99269562fc6f1c5d802628a1aea3fd40272587bc71516540ded3603efe365737212dc082c4c91f5bd,
    512'h11918ad4d28172180502c76e4b78f3793275b82b9024c2fcc934ab17e378e2ec0131450d751fea01392c3de38a8b2a06f69b01f7f1b2b9b9096e04162648fade,
    512'h08c8c56a6940b90c028163b725bc79bc993adc15c812617e649a558bf1bc71760098a286ba8ff5009c961ef1c54595037b4d80fbf8d95cdc84b7020b13247d6f,
    512'h046462b534a05c860140b1db92de3cde4c9d6e0ae40930bf324d2ac5f8de38bb004c51435d47fa804e4b0f78e2a2ca81bda6c07dfc6cae6e425b810589923eb7,
    512'h805ab1b53e5d896e786125ee3ccc7178ad8f321f117c9b747e577fe2464b0cd4d4ea45b20558bbd7c6a2f1603663afe4e518edf44cb63b3fc90b0a0f36361160,
    512'hc245d8353b23639a44f1eff4ebc557abdd061c15ebc64e91d85a5571990196e33eb94fcaa9571b7c02d60e6c5c031d564947fb3094db71970ca34f8a69e4068b,
    512'h6122ec1a9d91b1cd2278f7fa75e2abd5ee830e0af5e32748ec2d2ab8cc80cb719f5ca7e554ab8dbe016b07362e018eab24a3fd984a6db8cb8651a7c534f20345,
    512'h3091760d4ec8d8e6913c7bfd3af155eaf74187057af193a47616955c664065b8cfae53f2aa55c6df00b5839b1700c7559251fecc2536dc65c328d3e29a7901a2,
    512'h9a203be90369cb5e305f40fd68dbc5e2f0614698de00caf9dc7aa02e89042255331b44eafed1a5f861ddb711ccb2a90ef2e372aca01b023a09b2a37cbfc38eea,
    512'h4d101df481b4e5af182fa07eb46de2f17830a34c6f00657cee3d50174482112a998da2757f68d2fc30eedb88e65954877971b956500d811d04d951be5fe1c775,
    512'h26880efa40da72d78c17d03f5a36f178bc1851a6378032be771ea80ba24108954cc6d13abfb4697e18776dc4732caa43bcb8dcab2806c08e826ca8df2ff0e3ba,
    512'h1344077d206d396bc60be81fad1b78bc5e0c28d31bc0195f3b8f5405d120844aa663689d5fda34bf0c3bb6e239965521de5c6e55940360474136546f97f871dd,
    512'h09a203be90369cb5e305f40fd68dbc5e2f0614698de00caf9dc7aa02e89042255331b44eafed1a5f861ddb711ccb2a90ef2e372aca01b023a09b2a37cbfc38ee,
    512'h04d101df481b4e5af182fa07eb46de2f17830a34c6f00657cee3d50174482112a998da2757f68d2fc30eedb88e65954877971b956500d811d04d951be5fe1c77};
  always_comb
    for (int j = 0; j < 32; j++)
      crc[j] = ^(crc_in & SM[32 * j +: 32]) ^ ^(d & DM[512 * j +: 512]);
endmodule

// the next state of ref.c's ref_fsm16 (the register itself is left out: ltp counts logic)
module ref_fsm16 (input logic [15:0] s, input logic go, load, input logic [15:0] v, output logic [15:0] n);
  always_comb
    if (load) n = v;
    else if (go && s[14:0] != 0) n = {s[15], s[14:0] - 15'd1};
    else if (go) n = s ^ 16'h8000;
    else n = s;
endmodule
