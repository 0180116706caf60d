# Configuration from the cards' 1 Gb quad-SPI flash (MT25QU01G, 1.8 V bank 0), the same on U250,
# U280 and U55C: the properties Xilinx's board files and the open designs for these cards set
# (Corundum fpga/mqnic/Alveo/fpga_100g/fpga_au*.xdc, open-nic-shell constr/*/general.xdc). 63.8 MHz
# is the rate the U50 master XDC (rev 1.00.03) fell back to from 85: "85 may not work under all
# circumstances".
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property CFGBVS GND [current_design]
set_property CONFIG_MODE SPIx4 [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 63.8 [current_design]
set_property BITSTREAM.CONFIG.EXTMASTERCCLK_EN DISABLE [current_design]
set_property BITSTREAM.CONFIG.SPI_FALL_EDGE YES [current_design]
# a user image that fails to load falls back to the golden image below it in the flash
set_property BITSTREAM.CONFIG.CONFIGFALLBACK ENABLE [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN PULLUP [current_design]
set_property BITSTREAM.CONFIG.OVERTEMPSHUTDOWN ENABLE [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
